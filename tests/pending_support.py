"""A process that types Steers and Queue items into a run, for the kill -9 tests.

``python tests/pending_support.py HOME PROJECT URL FAULT`` creates a session and
prints its id, starts a run whose tool waits for a ``go`` file, then (while the
tool waits) steers once and queues two items, lets the tool finish and drains
the queue. ``FAULT`` is ``after:<type>[:n]`` or ``before:<type>[:n]``: the
process SIGKILLs itself right after (before) the n-th append holding a record
of that type — every transition of pending.md can be hit that way.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done; echo done"
STEER, FIRST, SECOND = "steer one", "queue one", "queue two"


def arm(writer: Any, fault: str) -> None:
    when, _, rest = fault.partition(":")
    kind, _, nth = rest.partition(":")
    target, seen = int(nth or 1), [0]
    original = writer.append_many

    def append_many(items: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        items = list(items)
        hit = any(t == kind for t, _ in items) and seen[0] + 1 == target
        seen[0] += any(t == kind for t, _ in items)
        if hit and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        records = original(items)
        if hit:
            os.kill(os.getpid(), signal.SIGKILL)
        return records

    writer.append_many = append_many


def main(home: str, project: str, url: str, fault: str) -> None:
    from mttui.config import load_settings
    from mttui.core.pending import PendingInputs
    from mttui.graph.runner import Runner
    from mttui.session.service import SessionService

    settings = load_settings({"provider": "openai", "base_url": url, "approval": "yolo"})
    settings = settings.with_overrides(max_retries=0, timeout=10.0)
    service = SessionService(Path(home), Path(project))
    writer = service.create_session(provider="openai", model=settings.model)
    print(writer.session_id, flush=True)
    arm(writer, fault)
    runner = Runner.for_service(service, writer, settings)
    pending = PendingInputs(writer, runner)
    thread = threading.Thread(target=lambda: list(runner.run("start the work")), daemon=True)
    thread.start()
    while b'"tool_dispatch"' not in writer.path.read_bytes():
        time.sleep(0.02)
    pending.steer(STEER)
    pending.add(FIRST)
    pending.add(SECOND)
    (Path(project) / "go").write_text("")
    thread.join()
    for events in pending.drain():
        list(events)
    runner.end_session()
    writer.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
