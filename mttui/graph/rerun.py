"""Re-running a settled interrupted call as a **new** call in a new run (the tool ledger).

The new call goes through the graph like any other: an assistant message holding
only that call is put on the thread, then the graph continues at ``tool_routing``,
which asks for approval (always: ``ask`` mode, session grants set aside for this
step), dispatches it, and lets the model see the result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mttui.session.records import new_id

from .events import MessageAdded, RunEvent

if TYPE_CHECKING:
    from .runner import Runner


def rerun_call(runner: Runner, tool_name: str, arguments: dict[str, Any],
               call_id: str | None = None) -> Iterator[RunEvent]:
    """Drive a new run whose only step is a new call of ``tool_name(arguments)`` (with the
    id ``call_id`` when given: the ledger names it before the run)."""
    from langchain_core.messages import AIMessage

    from .errors import ApprovalPendingError
    from .messages import new_message_id, to_record

    runner.prepare()
    if runner.pending_approval() is not None:
        raise ApprovalPendingError("an approval is pending: answer it before re-running a call")
    run_id = new_id("run")
    call_id = call_id or new_id("call")
    ai = AIMessage(content="", id=new_message_id(),
                   tool_calls=[{"id": call_id, "name": tool_name, "args": arguments}])
    record = to_record(ai, status="sent")
    runner.graph.update_state(runner.config, {
        "messages": [ai], "run_id": run_id, "step_count": 1, "stop_reason": None,
        "error": None, "pending_tool_calls": [], "completed_tool_calls": [],
        "approval_requests": [], "needs_human_approval": False}, as_node="reasoning")
    head: list[tuple[str, dict[str, Any]]] = [("run_start", {"run_id": run_id}),
                                              ("transcript_message", {"message": record})]
    ctx = runner.context
    saved = (ctx.approval, set(ctx.remembered))
    ctx.approval = "ask"
    ctx.remembered.clear()
    try:
        yield from runner.drive_from_checkpoint(run_id, head, [MessageAdded(record)])
    finally:
        ctx.approval = saved[0]
        ctx.remembered.update(saved[1])
