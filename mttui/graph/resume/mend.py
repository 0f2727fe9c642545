"""Lining the thread up with the log on resume (resume.md step 6, items of a crash
between the log and the checkpoint).

The log is the truth for what was said: messages it has after the checkpoint's last
one are added to the thread; every tool call is answered right after its assistant
message (a result from the log, else a closing message: ``interrupted`` when it was
dispatched, ``cancelled`` otherwise); a result that answers no call is dropped.
Writes that a killed step left pending in the checkpoint are committed first, so the
thread the next run starts from is the one ``get_state`` shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mttui.session.resume.facts import LogFacts

from ..events import RunEvent
from ..messages import from_record, new_message_id, to_record
from ..repair import CANCELLED_TEXT, INTERRUPTED_TEXT, pair_up
from .plan import log_after

if TYPE_CHECKING:
    from langchain_core.messages import ToolMessage
    from langchain_core.runnables import RunnableConfig

    from ..runner import Runner
    from ..state import AgentGraph


def commit_pending_writes(graph: AgentGraph, config: RunnableConfig) -> bool:
    """Apply the writes of the tasks a killed step finished (kept beside the newest
    checkpoint, shown by ``get_state`` but dropped by the next run's input) and end the
    step there. Only without a pending approval (its interrupt is such a write)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph import END

    saver = graph.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        return False
    found = pending_writes_of_newest(saver, config)
    if found is None:  # not a saver whose tables we know: ask it (decodes the checkpoint)
        saved = saver.get_tuple(config)
        found = saved is not None and bool(saved.pending_writes)
    if not found:
        return False
    graph.update_state(config, None, as_node=END)
    return True


def pending_writes_of_newest(saver: Any, config: RunnableConfig) -> bool | None:
    """Whether the thread's newest checkpoint has pending writes, asked of
    ``SqliteSaver``'s tables without decoding the checkpoint (whose messages cost as
    much as the view is long); ``None`` when the saver is not one whose tables are known."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    if not isinstance(saver, SqliteSaver):
        return None
    conf = config.get("configurable") or {}
    thread, ns = str(conf.get("thread_id")), str(conf.get("checkpoint_ns") or "")
    try:
        with saver.cursor(transaction=False) as cur:
            row = cur.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND "
                              "checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                              (thread, ns)).fetchone()
            if row is None:
                return False
            return cur.execute("SELECT 1 FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
                               "AND checkpoint_id = ? LIMIT 1",
                               (thread, ns, row[0])).fetchone() is not None
    except sqlite3.Error:
        return None


def no_approval(runner: Runner) -> None:
    """Tell the runner its thread waits for no approval (the resume plan, made from the
    thread's state, found no interrupt and the apply step adds none): the next run need
    not decode the checkpoint to learn it."""
    runner.approvals.pending = None
    runner.approvals.known = True


def close_call(runner: Runner, events: list[RunEvent], run_id: str, call: dict[str, Any],
               interrupted: bool) -> ToolMessage:
    """Journal ``tool_outcome`` + the closing tool message of an open call; returns it."""
    from langchain_core.messages import ToolMessage

    status = "interrupted" if interrupted else "cancelled"
    msg = ToolMessage(content=INTERRUPTED_TEXT if interrupted else CANCELLED_TEXT,
                      tool_call_id=call["id"], name=call.get("name") or "",
                      id=new_message_id(), status="error")  # fmt: skip
    entry = {"call_id": call["id"], "tool_name": call.get("name") or "",
             "arguments": call.get("args") or {}}  # fmt: skip
    record = to_record(msg, status="interrupted", tool_status=status)
    runner.journal.outcome(events.append, run_id, entry, status, record)
    return msg


def mend_thread(runner: Runner, facts: LogFacts, events: list[RunEvent], run_id: str,
                interrupted: list[str], *, ended: bool,
                messages: list[Any] | None = None) -> bool:
    """Line the thread (no approval pending) up with the log and end its unfinished
    chain (``ended``: the checkpoint has a next step). Returns whether it wrote.
    ``messages``: the thread's messages as just read (else read here)."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    graph, config = runner.graph, runner.config
    if messages is None:
        messages = list(graph.get_state(config).values.get("messages", []))
    restored = [from_record(m) for m in log_after(facts, messages)]
    desired = pair_up(messages + restored)
    logged = {m.get("tool_call_id"): m for m in facts.view if m.get("role") == "tool"}
    closed: set[str] = set()
    for i, slot in enumerate(desired):
        if not isinstance(slot, dict):
            continue
        cid = slot["id"]
        if cid in logged:  # finished: its result from the log, not run again
            desired[i] = from_record(logged[cid])
        else:
            desired[i] = close_call(runner, events, run_id, slot, cid in interrupted)
            closed.add(cid)
    wrote = bool(closed)
    for cid in interrupted:  # dispatched, but its call is not in the thread: journal only
        if cid not in closed:
            close_call(runner, events, run_id, {"id": cid, "name": facts.dispatch_names.get(cid)},
                       True)  # fmt: skip
            wrote = True
    before = [m.id for m in messages]
    after = [m.id for m in desired]
    changed = before != after
    if not changed and not ended:
        return wrote
    if after[: len(before)] == before:
        update = desired[len(before):]
    else:  # something in the middle moves: the list is written again in order
        update = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *desired]
    graph.update_state(config, {"messages": update, "pending_tool_calls": [],
                                "approval_requests": [], "needs_human_approval": False,
                                "stop_reason": "stopped"}, as_node="observation")  # fmt: skip
    return True
