"""``/clear``: start over in the same session (essentials.md "Slash commands").

One write, one fsync: ``session_clear {thread_id}`` (the new thread), the matching
``session_update {thread_id}`` every reader of the thread id already knows, and the
session's pending inputs dropped (queue items removed, unread Steers failed and
removed). The model's next request holds nothing from before; the history before
the boundary stays readable behind a "cleared" divider.
"""

from __future__ import annotations

from dataclasses import dataclass

from mttui.graph.runner import Runner
from mttui.session.errors import MttuiError
from mttui.session.records import new_id

from .pending import PendingInputs

DROPPED = "dropped by /clear"


class ClearError(MttuiError):
    """``/clear`` refused (a run is active, an approval waits); nothing was written."""


@dataclass(frozen=True)
class Cleared:
    thread_id: str
    dropped: int  # pending inputs dropped


def clear_session(runner: Runner, pending: PendingInputs) -> Cleared:
    """Give the session a new thread and drop its pending inputs, in one step."""
    if runner.busy:
        raise ClearError("cannot clear while a run is active (stop it first)")
    if runner.pending_approval() is not None:
        raise ClearError("an approval is pending: answer it before clearing")
    lane = pending.lane
    records: list[tuple[str, dict[str, object]]] = []
    thread_id = new_id("thread")
    records.append(("session_clear", {"thread_id": thread_id}))
    records.append(("session_update", {"thread_id": thread_id}))
    items = lane.queue() + lane.steers("unread", "failed")
    for item in items:
        if item.mode == "steer" and item.state == "unread" and item.message_id:
            records.append(("message_update", {"message_id": item.message_id,
                                               "status": "error", "error": DROPPED}))
        records.append(("pending_remove", {"item_id": item.id}))
    written = runner.writer.append_many(records)  # the log first …
    for rec in written:
        lane.apply(rec)
    for item in items:
        pending.held.discard(item.id)
    _seed(runner, thread_id)  # … then the checkpoint: a resume finds the new thread
    runner.invalidate()
    return Cleared(thread_id, len(items))


def _seed(runner: Runner, thread_id: str) -> None:
    """An empty checkpoint for the new thread (as a resume's rebuild writes one), so
    that a later resume continues it in execution mode. Lost in a crash, the resume
    rebuilds it from the log (nothing before the clear is in the model's view)."""
    runner.graph.update_state(
        {"configurable": {"thread_id": thread_id}},
        {"messages": [], "pending_tool_calls": [], "completed_tool_calls": [],
         "approval_requests": [], "needs_human_approval": False, "step_count": 0,
         "stop_reason": "stopped", "run_id": ""},
        as_node="observation",
    )  # fmt: skip
