"""The read-only resume plan as far as the log and the raw checkpoint file tell it.

The graph layer refines it with the checkpoint's state (``get_state``); this part
needs neither LangGraph nor Textual, so the session browser can show a verdict
for every session cheaply.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SessionNotFound
from .lock import holder_pid
from .reader import ReadStats
from .transcript import Transcript, fold


@dataclass
class ResumeWarning:
    code: str
    message: str
    count: int | None = None
    ids: list[str] | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.count is not None:
            out["count"] = self.count
        if self.ids is not None:
            out["ids"] = self.ids
        return out


@dataclass
class ResumePlan:
    """What resuming a session would do (resume.md); nothing is written to make it."""

    session_id: str
    thread_id: str | None
    mode: str  # execution | transcript | refused
    refusal: dict[str, str] | None = None
    warnings: list[ResumeWarning] = field(default_factory=list)
    pending_approval: dict[str, Any] | None = None
    interrupted_tool_calls: list[str] = field(default_factory=list)
    dangling_tool_calls: list[str] = field(default_factory=list)
    messages_in_view: int = 0
    compression_used: bool = False
    locked_by: int | None = None

    def warn(self, code: str, message: str, *, count: int | None = None,
             ids: list[str] | None = None) -> None:
        self.warnings.append(ResumeWarning(code, message, count, ids))

    def codes(self) -> list[str]:
        return [w.code for w in self.warnings]

    def as_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "mode": self.mode,
            "refusal": self.refusal,
            "warnings": [w.as_json() for w in self.warnings],
            "pending_approval": self.pending_approval,
            "interrupted_tool_calls": self.interrupted_tool_calls,
            "messages_in_view": self.messages_in_view,
            "compression_used": self.compression_used,
            "locked_by": self.locked_by,
        }

    def describe(self) -> str:
        """A readable multi-line summary for the CLI."""
        lines = [f"session {self.session_id}: {self.mode} resume"]
        if self.refusal:
            lines.append(f"  refused: {self.refusal['code']}: {self.refusal['message']}")
        for w in self.warnings:
            lines.append(f"  warning {w.code}: {w.message}")
        if self.pending_approval:
            lines.append(f"  approval {self.pending_approval['request_id']} will be asked again")
        lines.append(f"  messages in the model's view: {self.messages_in_view}"
                     + (" (from the last compression)" if self.compression_used else ""))
        if self.locked_by:
            lines.append(f"  open for writing in process {self.locked_by}")
        return "\n".join(lines)


def checkpoint_has_thread(db_path: Path, thread_id: str) -> bool:
    """Whether the checkpoint database holds a checkpoint of ``thread_id`` (read-only)."""
    if not db_path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute(
                "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (thread_id,)
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return row is not None


def plan_from_log(session_id: str, t: Transcript, stats: ReadStats, *,
                  checkpoint_found: bool) -> ResumePlan:
    """The plan from the log alone, given whether a checkpoint exists."""
    plan = ResumePlan(session_id=session_id, thread_id=t.thread_id, mode="execution")
    if not t.has_start or not t.messages:
        plan.mode = "refused"
        what = "no readable session_start" if not t.has_start else "no message at all"
        plan.refusal = {"code": "session_empty", "message": f"the session has {what}"}
        return plan
    if stats.corrupt_lines:
        plan.warn("corrupt_lines_skipped",
                  f"{stats.corrupt_lines} line(s) of the log could not be read and were skipped",
                  count=stats.corrupt_lines)
    if not t.thread_id:
        plan.refusal = {"code": "missing_thread_id",
                        "message": "the session log names no thread id"}
    elif not checkpoint_found:
        plan.refusal = {"code": "checkpoint_not_found",
                        "message": f"no checkpoint for thread {t.thread_id}"}
    summary, view = t.model_view()
    plan.compression_used = summary is not None
    plan.messages_in_view = len(view) + (1 if summary is not None else 0)
    interrupted = t.interrupted_calls()
    plan.interrupted_tool_calls = interrupted
    if interrupted:
        plan.warn("tool_interrupted",
                  f"{len(interrupted)} tool call(s) were running when the process stopped; "
                  "they will not be run again", count=len(interrupted), ids=interrupted)
    pending_ids = {c.get("call_id") for r in t.open_requests.values()
                   for c in r.get("tool_calls") or []}
    dangling = [cid for cid, _ in t.open_tool_calls()
                if cid not in pending_ids and cid not in interrupted]
    plan.dangling_tool_calls = dangling
    if dangling:
        plan.warn("dangling_tool_call_closed",
                  f"{len(dangling)} tool call(s) had no result and will be closed",
                  count=len(dangling), ids=dangling)
    if plan.refusal is not None:
        plan.mode = "transcript"
        plan.warn("execution_not_restored",
                  f"only the conversation is restored ({plan.refusal['code']}); "
                  "open tool calls are closed as cancelled")
        return plan
    if t.open_requests:
        rid, req = next(reversed(t.open_requests.items()))
        plan.pending_approval = {"request_id": rid, "tool_calls": req.get("tool_calls") or []}
        plan.warn("approval_pending", "an approval will be asked again", ids=[rid])
    return plan


def check_session(service: Any, ref: str) -> ResumePlan:
    """Resolve ``ref`` and plan its resume from the log (read-only)."""
    try:
        info = service.resolve(ref)
    except SessionNotFound:
        raise
    records, stats = service.records(info.id)
    t = fold(records)
    found = bool(t.thread_id) and checkpoint_has_thread(
        service.layout.checkpoints_path(info.project_hash), t.thread_id or "")
    plan = plan_from_log(info.id, t, stats, checkpoint_found=found)
    plan.locked_by = holder_pid(Path(info.path))
    return plan
