"""The full resume plan (resume.md): the log-only plan refined with the checkpoint.

:func:`check_resume` is what ``mttui resume-check`` prints when a checkpoint of
the session's thread exists. It opens the checkpoint database read-only
(``mode=ro``; the database and its WAL are never written) and reads the state with
the light reader (``checkpoint_peek``), or asks the real graph for ``get_state`` when
that reader is not sure. :func:`refine` is the pure comparison of the two sources.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mttui.session.checkpoint_peek import peek_state
from mttui.session.paths import Layout
from mttui.session.resume.check import (
    ResumePlan,
    check_log,
    mark_locked,
    to_transcript_mode,
    warn_log,
    warn_tools,
)
from mttui.session.resume.facts import LogFacts
from mttui.session.transcript import in_model_view

from ..compression.cut import is_summary
from ..repair import open_tool_calls

if TYPE_CHECKING:
    from langgraph.types import StateSnapshot

    from ..state import AgentGraph


def pending_request(state: Any) -> dict[str, Any] | None:
    """The approval request of the checkpoint's interrupt, if one can be recovered."""
    for intr in getattr(state, "interrupts", None) or ():
        value = getattr(intr, "value", None)
        if isinstance(value, dict) and value.get("request_id"):
            return value
    return None


def refine(plan: ResumePlan, facts: LogFacts, state: Any) -> ResumePlan:
    """Refine an ``execution`` log-only plan with the checkpoint's ``state``.

    The checkpoint wins: open tool calls are the checkpoint's, classified with the
    journal; the message ids of both sources are compared; an approval must be
    recoverable from the checkpoint's interrupt.
    """
    values = dict(getattr(state, "values", None) or {})
    plan.checked = "checkpoint"
    if not values and not facts.message_count:
        return plan.finish()  # stopped before its first message: nothing to restore
    if not values:
        to_transcript_mode(plan, facts, {"code": "checkpoint_not_found",
                                         "message": f"no checkpoint for thread {facts.thread_id}"})
        return plan.finish()
    pending = pending_request(state)
    waiting = bool(values.get("needs_human_approval") or values.get("approval_requests")
                   or "human_approval" in (getattr(state, "next", None) or ()))
    if pending is None and (waiting or facts.open_requests):
        where = "the checkpoint" if waiting else "the log"
        to_transcript_mode(plan, facts, {
            "code": "approval_state_inconsistent",
            "message": f"{where} says an approval is awaited, but the checkpoint holds "
                       "no interrupt to ask it again"})  # fmt: skip
        return plan.finish()
    messages = list(values.get("messages") or [])
    plan.warnings, plan.pending_approval = [], None
    warn_log(plan, facts)
    _compare(plan, facts, messages)
    awaiting = {c.get("call_id") for c in (pending or {}).get("tool_calls") or []}
    if pending is not None:  # the step's other calls run (or not) once it is answered
        awaiting |= {e.get("call_id") for e in values.get("pending_tool_calls") or []
                     if isinstance(e, dict)}
    logged = {m.get("tool_call_id"): m for m in facts.view if m.get("role") == "tool"}
    plan.continued_calls = [] if pending is not None else _decided_calls(state, facts, logged)
    awaiting |= set(plan.continued_calls)
    restored = [] if pending is not None else log_after(facts, messages)
    plan.restored_messages = [str(m.get("id")) for m in restored]
    for w in plan.warnings:
        if w.code == "history_length_mismatch" and restored:
            w.message += (f"; the {len(restored)} message(s) the log has after the "
                          "checkpoint's last one are added to the thread")
    answered = {m.get("tool_call_id") for m in restored if m.get("role") == "tool"}
    calls = [c["id"] for c in open_tool_calls(messages) if c["id"] not in awaiting]
    calls += [str(c.get("id")) for m in restored for c in m.get("tool_calls") or []
              if c.get("id") not in answered]
    plan.interrupted_tool_calls = list(facts.interrupted)
    plan.recovered_tool_calls = [c for c in calls
                                 if c in logged and c not in facts.interrupted]
    plan.dangling_tool_calls = [c for c in calls
                                if c not in logged and c not in facts.interrupted]
    warn_tools(plan)
    plan.messages_in_view = len(messages) + len(restored)
    plan.compression_used = bool(messages) and is_summary(messages[0])
    if pending is not None:
        rid = str(pending["request_id"])
        plan.pending_approval = {"request_id": rid, "tool_calls": pending.get("tool_calls") or []}
        if rid in facts.decided:  # answered before the process stopped: applied, not asked
            plan.decided_approval = rid
        else:
            plan.warn("approval_pending", "an approval will be asked again", ids=[rid])
    return plan.finish()


def _decided_calls(state: Any, facts: LogFacts, logged: dict[Any, Any]) -> list[str]:
    """The calls of a step that an approval answered in the log let through, when the process
    stopped before any of them was dispatched (the thread's next step runs them): the
    run goes on with that decision instead of closing them. Empty otherwise."""
    values = dict(getattr(state, "values", None) or {})
    entries = [e for e in values.get("pending_tool_calls") or [] if isinstance(e, dict)]
    # next: tool_execution, or nothing yet when the answering step's writes are pending
    if tuple(getattr(state, "next", None) or ()) not in ((), ("tool_execution",)) \
            or not entries:
        return []
    ids = [str(e.get("call_id")) for e in entries]
    started = set(facts.interrupted) | {str(k) for k in logged}
    if any(i in started for i in ids) or not any(e.get("status") == "approved"
                                                for e in entries):
        return []
    return ids if facts.decided_calls.intersection(ids) else []  # answered by the user


def log_after(facts: LogFacts, messages: list[Any]) -> list[dict[str, Any]]:
    """The log's messages (in the model's view) after the last one the checkpoint has,
    that the checkpoint lacks: what a crash between the log and the checkpoint left out
    of the thread (the log is the truth for what was said). A tool result of a call
    the thread has is left out (an open one is closed with it as a recovered call)."""
    ckpt = {str(getattr(m, "id", "")) for m in messages if not is_summary(m)}
    view = [m for m in facts.view if in_model_view(m)]
    last = max((i for i, m in enumerate(view) if str(m.get("id")) in ckpt), default=-1)
    if last < 0 and len(ckpt) > 0:
        return []  # the thread shares no message with the log: nothing to line up with
    has = {c["id"] for m in messages for c in getattr(m, "tool_calls", None) or []}
    return [m for m in view[last + 1:] if str(m.get("id")) not in ckpt
            and not (m.get("role") == "tool" and m.get("tool_call_id") in has)]


def _compare(plan: ResumePlan, facts: LogFacts, messages: list[Any]) -> None:
    """``history_length_mismatch`` / ``transcript_incomplete``: the two id sets."""
    in_ckpt = [str(m.id) for m in messages if not is_summary(m)]
    ckpt_ids = set(in_ckpt)
    view = [str(m.get("id")) for m in facts.view if in_model_view(m)]
    view_ids = set(view)
    # a finished call's result the checkpoint lacks is put back by the apply step
    open_ids = {c["id"] for c in open_tool_calls(messages)}
    recoverable = {str(m.get("id")) for m in facts.view
                   if m.get("role") == "tool" and m.get("tool_call_id") in open_ids}
    unknown = [i for i in in_ckpt if i not in view_ids]
    known = facts.known_ids(unknown)
    lacking = [i for i in unknown if i not in known]
    differ = [i for i in view if i not in ckpt_ids and i not in recoverable]
    differ += [i for i in unknown if i in known]
    if differ:
        plan.warn("history_length_mismatch", f"the checkpoint and the transcript disagree on "
                  f"{len(differ)} message(s); the checkpoint is used", count=len(differ),
                  ids=differ)
    if lacking:
        plan.warn("transcript_incomplete", f"the checkpoint has {len(lacking)} message(s) the "
                  "transcript lacks; the history shown may be incomplete", count=len(lacking),
                  ids=lacking)


@contextlib.contextmanager
def read_only_graph(db_path: Path) -> Iterator[AgentGraph]:
    """The agent graph on a read-only connection to ``checkpoints.sqlite``."""
    from ..agent import build_graph
    from ..context import GraphContext
    from ..message_saver import MessageSaver

    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, check_same_thread=False)
    try:
        saver = MessageSaver(conn)
        saver.is_setup = True  # the tables exist; setting up would try to write
        ctx = GraphContext(model=None, project=Path("."), journal=None, system_prompt="")
        yield build_graph(ctx, saver)
    finally:
        conn.close()


def refine_from_checkpoint(
    plan: ResumePlan, facts: LogFacts, layout: Layout, *, peek: bool = True
) -> ResumePlan:
    """:func:`refine` with the state read from the project's checkpoint database: by the
    light reader when it recognises everything (no LangGraph import), else by the graph.
    ``peek=False`` always asks the graph."""
    if not facts.message_count:
        plan.checked = "checkpoint"
        return plan.finish()  # stopped before its first message: nothing to restore
    db = layout.checkpoints_path(facts.project_hash)
    state: Any = peek_state(db, facts.thread_id or "") if peek else None
    if state is None:
        try:
            state = graph_state(db, facts.thread_id or "")
        except Exception as exc:  # an unreadable checkpoint is as good as none
            return unreadable(plan, facts, exc)
    return refine(plan, facts, state)


def graph_state(db: Path, thread_id: str) -> StateSnapshot:
    """``get_state`` of ``thread_id`` on a read-only connection (imports LangGraph)."""
    with read_only_graph(db) as graph:
        return graph.get_state({"configurable": {"thread_id": thread_id}})


def unreadable(plan: ResumePlan, facts: LogFacts, exc: Exception) -> ResumePlan:
    """The plan when the checkpoint exists but cannot be read."""
    plan.checked = "checkpoint"
    to_transcript_mode(plan, facts, {
        "code": "checkpoint_not_found",
        "message": f"the checkpoint of thread {facts.thread_id} cannot be read "
                   f"({type(exc).__name__})"})  # fmt: skip
    return plan.finish()


def check_resume(layout: Layout, project_hash: str, ref: str, *, peek: bool = True) -> ResumePlan:
    """The plan of ``mttui resume-check``: the log-only plan, refined with the checkpoint
    when one of the session's thread exists. Writes nothing."""
    plan, facts = check_log(layout, project_hash, ref, lock=False)
    if facts is None:
        return plan
    if plan.mode == "execution":  # a checkpoint of the thread exists
        plan = refine_from_checkpoint(plan, facts, layout, peek=peek)
    mark_locked(plan, facts.path)
    return plan
