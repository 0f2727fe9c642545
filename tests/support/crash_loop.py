"""Crash points in the checkpoint database as well as the log, for the crash tests.

Run as a script it is ``mttui`` (like ``fault_entry.py``, whose ``MTTUI_FAULT`` it
honours) with two more ways to die by SIGKILL:

- ``MTTUI_FAULT=after:checkpoint:<source>`` (or ``before:``): around the first
  checkpoint put whose metadata ``source`` is ``<source>`` (``input``: the
  ``__start__`` writes of a new turn; ``loop``: a step's checkpoint);
- ``MTTUI_CRASH_AT=N``: right after the N-th durable write of the process
  (a log append, a checkpoint put or a put of pending writes; counted from 1),
  the random kill points of the property test.

Every durable write is also listed, one line ``<n> <what>`` each, in the file
named by ``MTTUI_CRASH_TRACE`` when set (to learn how many points a turn has).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _Counter:
    def __init__(self, crash_at: int, trace: str) -> None:
        self.n = 0
        self.crash_at = crash_at
        self.trace = trace

    def after(self, what: str) -> None:
        self.n += 1
        if self.trace:
            with open(self.trace, "a", encoding="utf-8") as f:
                f.write(f"{self.n} {what}\n")
        if self.n == self.crash_at:
            _die()


def arm(fault: str, crash_at: int, trace: str) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from mttui.session.writer import SessionWriter

    counter = _Counter(crash_at, trace)
    when, _, rest = fault.partition(":")
    kind, _, source = rest.partition(":")
    ckpt_fault = when in ("before", "after") and kind == "checkpoint" and source
    append_many = SessionWriter.append_many
    put, put_writes = SqliteSaver.put, SqliteSaver.put_writes

    def logged(
        self: SessionWriter, items: Iterable[tuple[str, dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        items = list(items)
        records = append_many(self, items)
        counter.after("log " + ",".join(t for t, _ in items))
        return records

    def put_checkpoint(self: Any, config: Any, checkpoint: Any, metadata: Any,
                       versions: Any) -> Any:
        hit = ckpt_fault and (metadata or {}).get("source") == source
        if hit and when == "before":
            _die()
        out = put(self, config, checkpoint, metadata, versions)
        if hit:
            _die()
        counter.after(f"checkpoint {(metadata or {}).get('source')} "
                      f"step {(metadata or {}).get('step')}")
        return out

    def put_pending(self: Any, config: Any, writes: Any, task_id: str,
                    task_path: str = "") -> None:
        put_writes(self, config, writes, task_id, task_path)
        counter.after("writes " + ",".join(str(c) for c, _ in writes))

    SessionWriter.append_many = logged  # type: ignore[method-assign]
    SqliteSaver.put = put_checkpoint  # type: ignore[method-assign]
    SqliteSaver.put_writes = put_pending  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from fault_entry import arm as arm_log

    from mttui.cli import main

    fault = os.environ.get("MTTUI_FAULT", "")
    arm_log(fault)
    arm(fault, int(os.environ.get("MTTUI_CRASH_AT") or 0),
        os.environ.get("MTTUI_CRASH_TRACE", ""))
    sys.exit(main(sys.argv[1:]))


# -- helpers for the tests (imported as ``support.crash_loop``) ------------------------
ENTRY = os.path.abspath(__file__)


def start(home: Any, project: Any, url: str, *args: str, **extra: str) -> Any:
    """``mttui exec --json ARGS`` through this entry point, in its own process group."""
    import subprocess

    from tests.support.resume import env

    return subprocess.Popen([sys.executable, ENTRY, "exec", "--json", *args], cwd=project,
                            env=env(home, OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test",
                                    **extra),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip


def run(home: Any, project: Any, url: str, *args: str, **extra: str) -> tuple[int, str, str]:
    """Run to the end (or to its crash point): ``(returncode, stdout, stderr)``, in a
    separate process forked warm (``support/zygote.py``)."""
    from tests.support import zygote
    from tests.support.resume import env

    done = zygote.run("crash_loop", ["exec", "--json", *args], cwd=project,
                      env=env(home, OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test", **extra))
    return done.returncode, done.stdout, done.stderr


def user_texts_since_compression(records: list[dict[str, Any]]) -> list[str]:
    """The user messages of a log's transcript the model must see: those after the last
    ``compression`` (plus the ones it kept), in order."""
    last = max((i for i, r in enumerate(records) if r["type"] == "compression"), default=-1)
    kept = set(records[last].get("kept_message_ids") or []) if last >= 0 else set()
    out = []
    for i, r in enumerate(records):
        msg = r.get("message") if r["type"] == "transcript_message" else None
        if not msg or msg.get("role") != "user" or msg.get("status") in ("error", "pending"):
            continue
        if i > last or msg.get("id") in kept:
            out.append(str(msg.get("content")))
    return out


def request_user_texts(request: dict[str, Any]) -> str:
    """The user messages of an OpenAI request body, joined (steers merge several)."""
    return "\n".join(str(m.get("content") or "") for m in request["messages"]
                     if m.get("role") == "user")
