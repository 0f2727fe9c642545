"""Applying a resume plan (resume.md step 6) to a session open for writing.

Usage (the runner holds the session's write lock)::

    outcome = resume_session(runner)     # plan, then apply; raises ResumeRefused
    outcome.mode, outcome.warnings       # what to show (warnings as JSON dicts)
    outcome.pending                      # an approval to ask again (same request_id)
    outcome.decided                      # …or its answer, already in the log: applied

Only this step writes. The log is written first, the checkpoint second, so that
a crash in between is finished by the next resume without duplicating anything
(a result already in the log is put into the checkpoint with its own id).
Applying twice writes nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mttui.session.errors import MttuiError
from mttui.session.reader import first_record, parse_line, reversed_lines
from mttui.session.records import new_id
from mttui.session.resume.check import ResumePlan, plan_from_facts
from mttui.session.resume.facts import LogFacts, facts_for_path
from mttui.session.transcript import in_model_view
from mttui.session.writer import SessionWriter

from ..compression.summary import SUMMARY_HEADER
from ..events import ApprovalRequested, RunEvent
from ..messages import from_record
from ..repair import open_tool_calls
from .mend import close_call, commit_pending_writes, mend_thread, no_approval
from .plan import refine, unreadable

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, ToolMessage

    from ..runner import Runner


class ResumeRefused(MttuiError):
    """The plan refuses the resume (``code``: a refusal code of resume.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"cannot resume: {message} ({code})")
        self.code = code


@dataclass
class ResumeOutcome:
    plan: ResumePlan
    wrote: bool = False  # whether the apply step changed anything
    events: list[RunEvent] = field(default_factory=list)  # MessageAdded/ToolFinished of closings
    pending: ApprovalRequested | None = None
    # the pending approval's answer found in the log (applied, never asked again):
    # {"decisions": {call_id: approve|deny}, "reason": str | None}
    decided: dict[str, Any] | None = None
    continues: bool = False  # decided calls never dispatched: the run goes on with them

    @property
    def mode(self) -> str:
        return self.plan.mode

    @property
    def warnings(self) -> list[dict[str, Any]]:
        return [w.as_json() for w in self.plan.warnings]


def plan_for_runner(runner: Runner) -> tuple[ResumePlan, LogFacts]:
    """The full plan of the runner's session (the runner holds its lock)."""
    plan, facts, _ = _plan_and_state(runner)
    return plan, facts


def _plan_and_state(runner: Runner) -> tuple[ResumePlan, LogFacts, Any]:
    """The plan, and the thread's state it was made with (``None``: none read)."""
    w = runner.writer
    facts = facts_for_path(w.path, w.session_id, w.project_hash)
    try:
        state = runner.graph.get_state(runner.config) if facts.thread_id else None
    except MttuiError:  # no model configured, …: a one-line error for the user
        raise
    except Exception as exc:  # an unreadable checkpoint: the transcript is rebuilt
        plan = unreadable(plan_from_facts(facts, checkpoint_found=True), facts, exc)
        return plan, facts, None
    plan = plan_from_facts(facts, checkpoint_found=bool(state and state.values))
    if plan.mode == "execution":
        plan = refine(plan, facts, state)
    return plan, facts, state


def resume_session(runner: Runner) -> ResumeOutcome:
    """Plan, then apply. Raises :class:`ResumeRefused` when the plan refuses."""
    plan, facts, state = _plan_and_state(runner)
    if plan.mode == "refused":
        assert plan.refusal is not None
        raise ResumeRefused(plan.refusal["code"], plan.refusal["message"])
    if runner.remembered:  # session grants keep working: say so (revocable)
        tools = sorted(runner.remembered)
        plan.warn("grants_restored", "tools approved for the rest of the session still run "
                  f"without asking: {', '.join(tools)} (revoke with /permissions)",
                  count=len(tools), ids=tools)
    out = ResumeOutcome(plan)
    if plan.mode == "execution":
        _apply_execution(runner, plan, facts, out, state)
    else:
        _apply_transcript(runner, plan, facts, out)
    _close_stale_requests(runner, plan, facts, out)
    if facts.open_run is not None:  # the process died inside this run
        status = "awaiting_approval" if plan.pending_approval else "interrupted"
        runner.writer.append("run_end", run_id=facts.open_run, status=status)
        out.wrote = True
    if not _already_recorded(runner):
        runner.writer.append("session_resumed", mode=plan.mode, warnings=plan.codes())
        out.wrote = True
    runner.invalidate()
    if plan.mode == "execution" and plan.pending_approval is None:
        no_approval(runner)  # the plan read the thread: it holds no interrupt to ask
    out.pending = runner.pending_approval() if plan.mode == "execution" else None
    if out.pending is not None and plan.decided_approval == out.pending.request_id:
        out.decided = logged_decision(runner.writer, out.pending.request_id)
    return out


def logged_decision(writer: SessionWriter, request_id: str) -> dict[str, Any] | None:
    """The last ``approval_decision`` of ``request_id`` in the log (read from its end)."""
    for raw in reversed_lines(writer.path):
        rec = parse_line(raw) if raw.strip() else None
        if rec is not None and rec["type"] == "approval_decision" \
                and rec.get("request_id") == request_id:
            return {"decisions": dict(rec.get("decisions") or {}), "reason": rec.get("reason")}
    return None


def _closing(runner: Runner, out: ResumeOutcome, run_id: str, call: dict[str, Any],
             interrupted: bool) -> ToolMessage:
    out.wrote = True
    return close_call(runner, out.events, run_id, call, interrupted)


def _calls_in(facts: LogFacts) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for m in facts.view for c in m.get("tool_calls") or [] if c.get("id")}


def _apply_execution(runner: Runner, plan: ResumePlan, facts: LogFacts,
                     out: ResumeOutcome, planned: Any) -> None:
    """``planned``: the thread's state the plan was made with (reused while nothing
    has changed the thread since: decoding it costs as much as the view is long)."""
    graph, config = runner.graph, runner.config
    request = plan.pending_approval
    if plan.continued_calls:  # the thread's next step runs them: left as it is
        out.continues = True
        return
    committed = request is None and commit_pending_writes(graph, config)
    state = graph.get_state(config) if committed or planned is None else planned
    values = state.values
    run_id = str(values.get("run_id") or facts.open_run or "")
    if request is None:
        if mend_thread(runner, facts, out.events, run_id, plan.interrupted_tool_calls,
                       ended=bool(state.next), messages=list(values.get("messages", []))):
            out.wrote = True
    else:
        _close_beside_approval(runner, plan, facts, out, run_id)
    if request is not None and request["request_id"] not in facts.requests_seen:
        # the interrupt was checkpointed but the process died before recording it
        runner.approvals.record(runner.writer, request["request_id"], run_id,
                                [dict(c) for c in request["tool_calls"]])
        out.wrote = True


def _close_beside_approval(runner: Runner, plan: ResumePlan, facts: LogFacts,
                           out: ResumeOutcome, run_id: str) -> None:
    """Close the open calls that do not wait for the pending approval (its interrupt
    stays: it is asked again, or its logged decision applied)."""
    graph, config = runner.graph, runner.config
    values = graph.get_state(config).values
    open_calls = {c["id"]: c for c in open_tool_calls(list(values.get("messages", [])))}
    known = {**_calls_in(facts), **open_calls}
    closing = []
    for cid in plan.interrupted_tool_calls + plan.dangling_tool_calls:
        call = known.get(cid) or {"id": cid, "name": facts.dispatch_names.get(cid, "")}
        msg = _closing(runner, out, run_id, call, cid in plan.interrupted_tool_calls)
        if cid in open_calls:
            closing.append(msg)
    logged = {m.get("tool_call_id"): m for m in facts.view if m.get("role") == "tool"}
    closing += [from_record(logged[cid]) for cid in plan.recovered_tool_calls]
    if closing:
        graph.update_state(config, {"messages": closing}, as_node="tool_execution")
        out.wrote = True


def rebuild(facts: LogFacts) -> tuple[list[BaseMessage | str], list[tuple[dict[str, Any], bool]]]:
    """The model's view rebuilt from the log: summary + kept + after, every tool result
    right after its call. Returns the messages and the calls to close
    ``(call, interrupted)``; a closed call's message is left out (added by the caller)."""
    from langchain_core.messages import HumanMessage

    view = [m for m in facts.view if in_model_view(m)]
    results: dict[str, dict[str, Any]] = {}
    for m in view:
        if m.get("role") == "tool":
            results.setdefault(str(m.get("tool_call_id")), m)
    out: list[BaseMessage | str] = []
    if facts.summary is not None:
        out.append(HumanMessage(content=SUMMARY_HEADER + facts.summary, id=new_id("summary")))
    to_close: list[tuple[dict[str, Any], bool]] = []
    for m in view:
        if m.get("role") == "tool":
            continue  # placed right after its call (an orphan result is dropped)
        out.append(from_record(m))
        for call in m.get("tool_calls") or []:
            if call["id"] in results:
                out.append(from_record(results[call["id"]]))
            else:
                to_close.append((call, call["id"] in facts.interrupted))
                out.append(call["id"])  # a slot for the closing message
    return out, to_close


def _apply_transcript(runner: Runner, plan: ResumePlan, facts: LogFacts,
                      out: ResumeOutcome) -> None:
    messages, to_close = rebuild(facts)
    closed = {call["id"]: _closing(runner, out, facts.open_run or "", call, interrupted)
              for call, interrupted in to_close}
    messages = [closed[m] if isinstance(m, str) else m for m in messages]
    thread_id = new_id("thread")
    runner.graph.update_state(
        {"configurable": {"thread_id": thread_id}},
        {"messages": messages, "pending_tool_calls": [], "completed_tool_calls": [],
         "approval_requests": [], "needs_human_approval": False, "step_count": 0,
         "stop_reason": "stopped", "run_id": ""},
        as_node="observation",
    )  # fmt: skip
    runner.writer.append("session_update", thread_id=thread_id)
    out.wrote = True


STALE_REASON = "not asked again: the resumed session holds no such pending approval"


def _close_stale_requests(runner: Runner, plan: ResumePlan, facts: LogFacts,
                          out: ResumeOutcome) -> None:
    """Approval requests the log leaves open but nothing will ask again (the calls were
    closed instead) are decided ``deny``, so no later check finds them open."""
    pending = (plan.pending_approval or {}).get("request_id")
    for req in facts.open_requests:
        if req.get("request_id") == pending:
            continue
        calls = {c.get("call_id"): "deny" for c in req.get("tool_calls") or []}
        runner.writer.append("approval_decision", request_id=req.get("request_id"),
                             decisions=calls, reason=STALE_REASON)  # fmt: skip
        out.wrote = True


def _already_recorded(runner: Runner) -> bool:
    """Whether the log already ends with a ``session_resumed`` (only ``session_end``
    after it): a resume repeated with nothing in between is recorded once (the first
    one already closed what its warnings named; a transcript rebuild is followed by
    plain execution resumes)."""
    for raw in reversed_lines(runner.writer.path):
        rec = parse_line(raw) if raw.strip() else None
        if rec is None or rec["type"] == "session_end":
            continue
        return bool(rec["type"] == "session_resumed")
    return False


def check_resumable(writer: SessionWriter) -> None:
    """Raise :class:`ResumeRefused` when the log alone refuses a resume (an empty
    session), before anything is written to it. Only a log without a readable
    ``session_start`` is refused: when its first record is one, nothing more is read."""
    first = first_record(writer.path)
    if first is not None and first["type"] == "session_start":
        return
    facts = facts_for_path(writer.path, writer.session_id, writer.project_hash)
    plan = plan_from_facts(facts, checkpoint_found=True)
    if plan.mode == "refused" and plan.refusal is not None:
        raise ResumeRefused(plan.refusal["code"], plan.refusal["message"])
