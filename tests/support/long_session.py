"""A long session as a session that kept talking to its model leaves it: turns (in runs,
or not), a compression every ``every`` messages, a checkpoint of the model's view since
the last one, and an index that has read it all. Written straight as JSONL lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mttui.config import Settings
from mttui.session.paths import ensure_dir
from mttui.session.service import SessionService

KEPT = 10


@dataclass
class LongSession:
    sid: str
    path: Path
    kept_start: int  # byte offset of the first message the last compression kept
    compression: int  # byte offset of the last compression record


def _line(seq: int, sid: str, type_: str, **fields: object) -> bytes:
    rec = {"type": type_, "seq": seq, "timestamp": "2026-01-01T00:00:00.000Z",
           "session_id": sid, **fields}  # fmt: skip
    return (json.dumps(rec, separators=(",", ":")) + "\n").encode()


def write_long_session(service: SessionService, sid: str, n: int, *, every: int,
                       runs: bool = True, ended: bool = True,
                       text_bytes: int = 600) -> LongSession:
    """Write, index and checkpoint a session of ``n`` messages. ``ended=False``: the
    process died (no ``session_end``); with an odd ``n`` its last run never ended."""
    folder = ensure_dir(service.layout.project_dir(service.project_hash))
    path = folder / f"session-20260101-000000-{sid}.jsonl"
    lines: list[bytes] = []
    seq, size = 0, 0
    offsets: dict[str, int] = {}
    kept_start = compression = 0

    def add(type_: str, **fields: object) -> int:
        nonlocal seq, size
        seq += 1
        at = size
        lines.append(_line(seq, sid, type_, **fields))
        size += len(lines[-1])
        return at

    add("session_start", v=1, thread_id=f"thread-{sid}", project=str(service.project),
        provider="openai", model="bench", title="long")  # fmt: skip
    filler = ("lorem ipsum dolor sit amet " * (text_bytes // 27 + 1))[:text_bytes]
    for k in range(n):
        if runs and k % 2 == 0:
            add("run_start", run_id=f"run-{k}")
        if k and k % every == 0:
            kept = [f"m-{i}" for i in range(k - KEPT, k)]
            kept_start = offsets[kept[0]]
            compression = add("compression", summary=f"summary up to {k}",
                              removed_count=every - KEPT, kept_count=KEPT,
                              kept_message_ids=kept, trigger="auto", tokens_before=9000,
                              tokens_after=900)  # fmt: skip
        role = "user" if k % 2 == 0 else "assistant"
        offsets[f"m-{k}"] = add("transcript_message", message={
            "id": f"m-{k}", "role": role, "content": f"{k} {filler}", "status": "sent"})
        if runs and k % 2:
            add("run_end", run_id=f"run-{k - 1}", status="completed")
    if ended:
        add("session_end", stats={"turns": n // 2, "tool_calls": 0})
    path.write_bytes(b"".join(lines))
    service.reindex()
    checkpoint_view(service, sid)
    return LongSession(sid, path, kept_start, compression)


def checkpoint_view(service: SessionService, sid: str) -> None:
    """Give the session's thread a checkpoint holding the model's view (summary, kept
    and later messages), as a session that ran has."""
    from mttui.graph.resume.apply import plan_for_runner, rebuild
    from mttui.graph.runner import Runner

    with service.open_writer(sid) as writer:
        runner = Runner.for_service(service, writer, Settings(provider="offline"))
        try:
            _, facts = plan_for_runner(runner)
            messages, _ = rebuild(facts)
            runner.graph.update_state(runner.config, {"messages": messages,
                                                      "stop_reason": "stopped"},
                                      as_node="observation")  # fmt: skip
        finally:
            runner.close()
