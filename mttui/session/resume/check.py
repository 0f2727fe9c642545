"""The read-only resume plan as far as the log and the raw checkpoint file tell it.

The graph layer (``mttui.graph.resume.plan``) refines it with the checkpoint's
state (``get_state``); this part needs neither LangGraph nor Textual, so the
session browser and ``doctor`` can show a verdict for every session cheaply.
Nothing here writes: not the log, not the index, not the checkpoint database.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, cast

from .. import checkpoint_store
from ..errors import SessionNotFound
from ..fork_state import incomplete_text
from ..lock import holder_pid
from ..paths import Layout
from ..reader import ReadStats
from ..transcript import Transcript, in_model_view
from .facts import LogFacts, facts_from_transcript, load_facts

if TYPE_CHECKING:
    from ..record_types import ApprovalCall

# The order warnings are listed in (resume.md "Codes").
WARNING_ORDER = (
    "corrupt_lines_skipped",
    "history_length_mismatch",
    "transcript_incomplete",
    "tool_interrupted",
    "dangling_tool_call_closed",
    "approval_pending",
    "queue_held",
    "execution_not_restored",
    "rewind_incomplete",
)


@dataclass
class ResumeWarning:
    code: str
    message: str
    count: int | None = None
    ids: list[str] | None = None

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "message": self.message}
        if self.count is not None:
            out["count"] = self.count
        if self.ids is not None:
            out["ids"] = self.ids
        return out


class PendingApproval(TypedDict, total=False):
    """The approval a resume asks again."""

    request_id: str
    tool_calls: list[ApprovalCall]


@dataclass
class ResumePlan:
    """What resuming a session would do (resume.md); nothing is written to make it.

    ``checked`` says what was consulted: ``log`` (the log-only plan) or
    ``checkpoint`` (refined with the checkpoint's state). Tool calls the apply step
    will close: ``interrupted_tool_calls`` (dispatched, may have run: closed as
    interrupted), ``dangling_tool_calls`` (never started: closed as cancelled) and
    ``recovered_tool_calls`` (finished, but the checkpoint lacks the result: closed
    with the logged result).
    """

    session_id: str
    thread_id: str | None
    mode: str  # execution | transcript | refused
    refusal: dict[str, str] | None = None
    warnings: list[ResumeWarning] = field(default_factory=list)
    pending_approval: PendingApproval | None = None
    interrupted_tool_calls: list[str] = field(default_factory=list)
    dangling_tool_calls: list[str] = field(default_factory=list)
    recovered_tool_calls: list[str] = field(default_factory=list)
    # log messages after the checkpoint's last one that the thread lacks (added back)
    restored_messages: list[str] = field(default_factory=list)
    decided_approval: str | None = None  # an approval whose logged decision is applied
    # calls an answered approval let through, never dispatched: the run goes on with them
    continued_calls: list[str] = field(default_factory=list)
    messages_in_view: int = 0
    compression_used: bool = False
    locked_by: int | None = None
    unlocked_mode: str | None = None  # the mode once the other writer is gone
    checked: str = "log"

    def warn(self, code: str, message: str, *, count: int | None = None,
             ids: list[str] | None = None) -> None:
        self.warnings.append(ResumeWarning(code, message, count, ids))

    def codes(self) -> list[str]:
        return [w.code for w in self.warnings]

    def finish(self) -> ResumePlan:
        """Put the warnings in their documented order."""
        rank = {c: i for i, c in enumerate(WARNING_ORDER)}
        self.warnings.sort(key=lambda w: rank.get(w.code, len(rank)))
        return self

    def as_json(self) -> dict[str, object]:
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
            "dangling_tool_calls": self.dangling_tool_calls,
            "recovered_tool_calls": self.recovered_tool_calls,
            "restored_messages": self.restored_messages,
            "decided_approval": self.decided_approval,
            "continued_calls": self.continued_calls,
            "locked_by": self.locked_by,
            "unlocked_mode": self.unlocked_mode,
            "checked": self.checked,
        }

    def describe(self) -> str:
        """A readable multi-line summary for the CLI."""
        lines = [f"session {self.session_id}: {self.mode} resume"]
        if self.refusal:
            lines.append(f"  refused: {self.refusal['code']}: {self.refusal['message']}")
        for w in self.warnings:
            lines.append(f"  warning {w.code}: {w.message}")
        if self.restored_messages:
            lines.append(f"  {len(self.restored_messages)} message(s) of the log are added "
                         "back to the thread")
        if self.continued_calls:
            lines.append(f"  {len(self.continued_calls)} decided tool call(s) never started: "
                         "the run goes on with them (not asked again)")
        if self.decided_approval:
            lines.append(f"  approval {self.decided_approval} was decided before the process "
                         "stopped: the decision is applied, not asked again")
        elif self.pending_approval:
            lines.append(f"  approval {self.pending_approval['request_id']} will be asked again")
        if self.mode != "refused" or self.unlocked_mode:
            lines.append(f"  messages in the model's view: {self.messages_in_view}"
                         + (" (from the last compression)" if self.compression_used else ""))
        if self.locked_by:
            lines.append(f"  open for writing in process {self.locked_by}"
                         + (f"; once it is closed: {self.unlocked_mode} resume"
                            if self.unlocked_mode else ""))
        return "\n".join(lines)


def refused_plan(session_id: str, code: str, message: str) -> ResumePlan:
    return ResumePlan(session_id, None, "refused", {"code": code, "message": message})


def open_calls(messages: Sequence[Mapping[str, object]]) -> list[str]:
    """Call ids of assistant tool calls in ``messages`` without a tool message there."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    out = []
    for m in messages:
        calls = m.get("tool_calls") or []
        for call in calls if isinstance(calls, list) else []:
            cid = call.get("id") if isinstance(call, dict) else None
            if cid and cid not in answered:
                out.append(cid)
    return out


def warn_tools(plan: ResumePlan) -> None:
    """The tool-call warnings of a plan whose tool-call lists are filled in."""
    n, ids = len(plan.interrupted_tool_calls), plan.interrupted_tool_calls
    if n:
        plan.warn("tool_interrupted", f"{n} tool call(s) were running when the process "
                  "stopped; they are closed as interrupted and not run again", count=n, ids=ids)
    closed = plan.dangling_tool_calls + plan.recovered_tool_calls
    if closed:
        parts = []
        if plan.dangling_tool_calls:
            parts.append(f"{len(plan.dangling_tool_calls)} never started (closed as cancelled; "
                         "it may run if the model asks again)")
        if plan.recovered_tool_calls:
            parts.append(f"{len(plan.recovered_tool_calls)} finished (closed with the result "
                         "from the log, not run again)")
        plan.warn("dangling_tool_call_closed", f"{len(closed)} tool call(s) had no result: "
                  + "; ".join(parts), count=len(closed), ids=closed)


def warn_log(plan: ResumePlan, facts: LogFacts) -> None:
    """Warnings that come from the log alone: corrupt lines and held queue items."""
    warn_rewind(plan, facts)
    if facts.corrupt_lines:
        plan.warn("corrupt_lines_skipped", f"{facts.corrupt_lines} line(s) of the log could "
                  "not be read and were skipped", count=facts.corrupt_lines)
    if facts.queued:
        plan.warn("queue_held", f"{len(facts.queued)} queued input(s) are held until the "
                  "queue is resumed", count=len(facts.queued), ids=list(facts.queued))


def to_transcript_mode(plan: ResumePlan, facts: LogFacts, refusal: dict[str, str]) -> None:
    """Execution is refused: only the conversation is rebuilt (every open call closed)."""
    plan.mode, plan.refusal, plan.pending_approval = "transcript", refusal, None
    view = [m for m in facts.view if in_model_view(m)]
    plan.compression_used = facts.compression is not None
    plan.messages_in_view = len(view) + (1 if plan.compression_used else 0)
    plan.recovered_tool_calls = []
    plan.interrupted_tool_calls = list(facts.interrupted)
    plan.dangling_tool_calls = [c for c in open_calls(view) if c not in facts.interrupted]
    plan.warnings = [w for w in plan.warnings if w.code in ("corrupt_lines_skipped", "queue_held")]
    warn_tools(plan)
    plan.warn("execution_not_restored", f"only the conversation is restored "
              f"({refusal['code']}: {refusal['message']}); open tool calls are closed, not run")


def plan_from_facts(facts: LogFacts, *, checkpoint_found: bool) -> ResumePlan:
    """The plan from the log alone, given whether a checkpoint of its thread exists."""
    plan = ResumePlan(session_id=facts.session_id, thread_id=facts.thread_id, mode="execution")
    if not facts.has_start:
        return refused_plan(facts.session_id, "session_empty",
                            "the session has no readable session_start")
    warn_log(plan, facts)
    if not facts.message_count and facts.thread_id:
        # stopped before its first message: nothing to restore, it simply continues
        return plan.finish()
    if not facts.thread_id:
        to_transcript_mode(plan, facts, {"code": "missing_thread_id",
                                         "message": "the session log names no thread id"})
        return plan.finish()
    if not checkpoint_found:
        to_transcript_mode(plan, facts, {"code": "checkpoint_not_found",
                                         "message": f"no checkpoint for thread {facts.thread_id}"})
        return plan.finish()
    view = [m for m in facts.view if in_model_view(m)]
    plan.compression_used = facts.compression is not None
    plan.messages_in_view = len(view) + (1 if plan.compression_used else 0)
    awaiting = {c.get("call_id") for r in facts.open_requests for c in r.get("tool_calls") or []}
    plan.interrupted_tool_calls = list(facts.interrupted)
    plan.dangling_tool_calls = [c for c in open_calls(view)
                                if c not in facts.interrupted and c not in awaiting]
    warn_tools(plan)
    if facts.open_requests:
        req = facts.open_requests[-1]
        # (every approval_request names its request: storage.md)
        plan.pending_approval = PendingApproval(request_id=cast(str, req.get("request_id")),
                                                tool_calls=req.get("tool_calls") or [])
        plan.warn("approval_pending", "an approval will be asked again",
                  ids=[str(req.get("request_id"))])
    return plan.finish()


def plan_from_log(session_id: str, t: Transcript, stats: ReadStats, *,
                  checkpoint_found: bool) -> ResumePlan:
    """The log-only plan of a folded transcript (see :func:`plan_from_facts`)."""
    facts = facts_from_transcript(t, stats, session_id=session_id, path=Path(),
                                  project_hash="")
    return plan_from_facts(facts, checkpoint_found=checkpoint_found)


def mark_locked(plan: ResumePlan, path: Path) -> None:
    """Another live process writes the session: resuming is refused, the check answers."""
    pid = holder_pid(path)
    if pid is None or pid == os.getpid():
        return
    plan.locked_by = pid
    if plan.mode == "refused":
        return
    plan.unlocked_mode = plan.mode
    plan.mode = "refused"
    holder = f"process {pid}" if pid > 0 else "another process"
    plan.refusal = {"code": "session_locked",
                    "message": f"the session is open for writing in {holder}"}


def check_log(
    layout: Layout, project_hash: str, ref: str, *, lock: bool = True
) -> tuple[ResumePlan, LogFacts | None]:
    """Resolve ``ref`` and plan from the log (read-only); a reference that matches no
    session gives a ``refused`` plan with ``session_not_found`` and no facts.
    ``lock``: also refuse (``session_locked``) when another process writes it."""
    try:
        info, facts = load_facts(layout, project_hash, ref)
    except SessionNotFound as exc:
        return refused_plan(ref, "session_not_found", str(exc)), None
    if info.fork_incomplete:  # refused for writing: finished or deleted instead
        return refused_plan(info.id, "fork_incomplete",
                            incomplete_text(info.id, named=False)), facts
    found = bool(facts.thread_id) and checkpoint_store.has_thread(
        layout.checkpoints_path(facts.project_hash), facts.thread_id or "")
    plan = plan_from_facts(facts, checkpoint_found=found)
    if lock:
        mark_locked(plan, facts.path)
    return plan, facts


class ProjectScope(Protocol):
    """Where sessions are looked up: a data home seen from one project (the service)."""

    layout: Layout
    project_hash: str


def check_session(service: ProjectScope, ref: str) -> ResumePlan:
    """The log-only plan of ``ref`` (read-only); raises ``SessionNotFound``."""
    plan, facts = check_log(service.layout, service.project_hash, ref)
    if facts is None and plan.refusal is not None:
        raise SessionNotFound(plan.refusal["message"])
    return plan


def warn_rewind(plan: ResumePlan, facts: LogFacts) -> None:
    """``rewind_incomplete``: a code rewind that started and never ended (timetravel.md).
    From the fold (the log since the last compression): no second read of the log."""
    start = facts.rewind_open
    if start is not None:
        ref_from, ref_to = start.get("ref_from"), start.get("ref_to")
        what = ("the files were rewound but the conversation was not" if start.get("files_done")
                else "a rewind of the files stopped half-way")
        plan.warn("rewind_incomplete", f"{what} (from {ref_from} to {ref_to}); finish it with "
                  f"`mttui rewind {plan.session_id} --undo` or by repeating the rewind")
