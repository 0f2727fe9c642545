"""B7: journaling overhead per tool call — ``tool_dispatch`` and ``tool_outcome`` (+ the
tool's transcript message), each fsynced, written through the real session writer
(which also keeps the index in step), around 1 000 real ``read_file`` calls.

Baseline: the same calls without a journal. Two fsyncs per call are the floor
the contract asks for, so the raw cost of one ``write`` + ``fsync`` on this disk is
measured in the same run and the overhead is also given in those units.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B7"
CALLS = 1000


def _calls(project: Path, n: int) -> list[dict[str, Any]]:
    return [
        {"call_id": f"call_{i}", "tool_name": "read_file", "arguments": {"path": "src.py"}}
        for i in range(n)
    ]


def _raw_fsync(path: Path, n: int = 200) -> float:
    """Seconds for one append + fsync of a 200-byte line on the disk under ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        start = time.perf_counter()
        for _ in range(n):
            os.write(fd, b"x" * 199 + b"\n")
            os.fsync(fd)
        return (time.perf_counter() - start) / n
    finally:
        os.close(fd)


def run(ctx: Context) -> list[Row]:
    from mttui.graph.journal import Journal
    from mttui.graph.messages import new_message_id
    from mttui.graph.tools import execute_tool
    from mttui.session.log import SessionLog
    from mttui.session.service import SessionService
    from mttui.session.writer import SessionWriter

    root = ctx.root / "b7"
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "src.py").write_text("def f():\n    return 1\n" * 20)
    calls = _calls(project, CALLS)

    def without_journal() -> float:
        start = time.perf_counter()
        for call in calls:
            execute_tool(project, call["tool_name"], call["arguments"])
        return time.perf_counter() - start

    def with_journal(journal: Journal) -> float:
        start = time.perf_counter()
        for call in calls:
            journal.dispatch(lambda _e: None, "run-bench", call)
            res = execute_tool(project, call["tool_name"], call["arguments"])
            record = {"id": new_message_id(), "role": "tool", "content": res.output,
                      "status": "sent", "tool_call_id": call["call_id"], "name": "read_file"}
            journal.outcome(lambda _e: None, "run-bench", call, res.status, record)
        return time.perf_counter() - start

    base = min(without_journal() for _ in range(3))
    service = SessionService(root / "home", project)
    with service.create_session(provider="offline", model="bench") as writer:
        ours = with_journal(Journal(writer))
    # the same journal on a bare log: what the index update adds
    bare_log = SessionLog.create(root / "bare.jsonl", "b7bare000000")
    with SessionWriter(bare_log, thread_id="t", project=str(project), project_hash="-") as bare:
        log_only = with_journal(Journal(bare))
    per_call = (ours - base) / CALLS
    fsync = _raw_fsync(root / "fsync.probe")
    return [
        Row(f"B7 journal overhead per tool call ({CALLS:,} calls, 2 fsyncs each)",
            fmt_time(base / CALLS), fmt_time(ours / CALLS), f"+{fmt_time(per_call)} per call",
            "≤ 2 ms per call", per_call <= 0.002),
        Row("B7 (info) the same, log only (no index update)", fmt_time(base / CALLS),
            fmt_time(log_only / CALLS), f"+{fmt_time((log_only - base) / CALLS)} per call", "—",
            None),
        Row("B7 (info) one raw append + fsync on this disk, same run", "—", fmt_time(fsync),
            f"overhead = {per_call / fsync:.1f} fsyncs per call", "2 fsyncs per call", None),
    ]  # fmt: skip
