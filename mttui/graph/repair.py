"""Closing tool calls that were left without a result (after a failure or a crash).

A call whose dispatch is recorded without an outcome may have run: it is closed
as ``interrupted`` and never re-run. Any other open call is ``cancelled``. The
closing tool messages go into the checkpoint first (``update_state``), and only
then into the log as ``tool_outcome`` + ``transcript_message``: when the
checkpoint cannot be written (a full disk), the log does not claim the call was
closed, and a resume applies the recorded decision once instead of running a call
the log calls cancelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .events import Emit
from .journal import Journal
from .messages import new_message_id, to_record

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from .state import AgentGraph

INTERRUPTED_TEXT = (
    "interrupted: the process stopped while this tool was running; it was not run again"
)
CANCELLED_TEXT = "cancelled: the run ended before this call started; it was not run"


def open_tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    """Tool calls of assistant messages that have no tool message yet, in order
    (duck-typed: the light checkpoint reader's messages are not LangChain's)."""
    answered = {m.tool_call_id for m in messages if getattr(m, "type", "") == "tool"}
    return [
        call
        for m in messages
        if getattr(m, "type", "") == "ai"
        for call in getattr(m, "tool_calls", None) or []
        if call["id"] not in answered
    ]


def close_open_calls(
    graph: AgentGraph,
    config: RunnableConfig,
    journal: Journal,
    emit: Emit,
    *,
    dispatched: Iterable[str],
    run_id: str = "",
) -> list[str]:
    """Answer every open call of the thread's checkpoint; returns the closed call ids."""
    from langchain_core.messages import ToolMessage

    state = graph.get_state(config)
    calls = open_tool_calls(list(state.values.get("messages", [])))
    if not calls:
        return []
    started = set(dispatched)
    closing: list[ToolMessage] = []
    outcomes: list[tuple[dict[str, Any], str, ToolMessage]] = []
    for call in calls:
        status = "interrupted" if call["id"] in started else "cancelled"
        text = INTERRUPTED_TEXT if status == "interrupted" else CANCELLED_TEXT
        msg = ToolMessage(
            content=text,
            tool_call_id=call["id"],
            name=call["name"],
            id=new_message_id(),
            status="error",
        )
        entry = {"call_id": call["id"], "tool_name": call["name"], "arguments": call["args"]}
        outcomes.append((entry, status, msg))
        closing.append(msg)
    # The checkpoint first: if it cannot be written (a full disk), the log must not
    # say "cancelled" either, or a resume would run the still-open call after all.
    graph.update_state(
        config,
        {
            "messages": closing,
            "pending_tool_calls": [],
            "approval_requests": [],
            "needs_human_approval": False,
            "stop_reason": "stopped",
        },
        as_node="observation",
    )
    for entry, status, msg in outcomes:
        journal.outcome(
            emit,
            run_id or state.values.get("run_id") or "",
            entry,
            status,
            to_record(msg, status="interrupted", tool_status=status),
        )
    return [c["id"] for c in calls]


def pair_up(messages: list[Any], keep_open: Iterable[str] = ()) -> list[Any]:
    """``messages`` in the order the model accepts: each assistant tool call followed
    by exactly one result, right after its assistant message. A result that answers
    no call (or a call already answered) is dropped; a call without a result gets
    its call dict as a slot in the list, for the caller to fill with a closing
    message. Calls in ``keep_open`` (awaiting an approval) stay open. Duck-typed
    like :func:`open_tool_calls`."""
    results: dict[str, Any] = {}
    for m in messages:
        if getattr(m, "type", "") == "tool":
            results.setdefault(m.tool_call_id, m)
    waiting = set(keep_open)
    out: list[Any] = []
    seen: set[str] = set()
    for m in messages:
        if getattr(m, "type", "") == "tool":
            continue  # placed right after its call below
        out.append(m)
        for call in getattr(m, "tool_calls", None) or []:
            cid = call["id"]
            if cid in seen:
                continue
            seen.add(cid)
            if cid in results:
                out.append(results[cid])
            elif cid not in waiting:
                out.append(call)
    return out
