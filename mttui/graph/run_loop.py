"""Streaming the graph for one run and deciding how the run ended."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from mttui.session.disk import DISK_FULL_TEXT, disk_full

from .events import ApprovalRequested, MessageAdded, Notice, RunEnded, RunEvent
from .live import LiveThread
from .messages import ToolPairingError, new_message_id
from .run_usage import RunUsage

if TYPE_CHECKING:
    from langgraph.types import Interrupt, StreamMode

    from .state import GraphInput

MODES: list[StreamMode] = ["custom", "updates"]
STEP_LIMIT_TEXT = (
    "step limit reached: {n} model calls in this run (max_steps_per_run); "
    "send a message to continue"
)


class _Seen:
    """What the node updates said, so the end of a run needs no extra state load."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.interrupts: list[Interrupt] = []


def _stream(live: LiveThread, graph_input: GraphInput, seen: _Seen) -> Iterator[RunEvent]:
    seen.interrupts = []
    parts = live.graph.stream(graph_input, live.config, stream_mode=MODES, durability="sync")
    for part in parts:
        mode, chunk = cast("tuple[str, Any]", part)  # several modes: (mode, chunk) pairs
        if mode == "custom":
            yield chunk
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                seen.interrupts = list(update or ())
            elif isinstance(update, dict):
                seen.values.update(update)
            if node in ("tool_execution", "observation"):
                # A long tool loop keeps only its newest checkpoint as it goes, so the
                # database holds one state, not one per step (pruning never fails a run).
                live.prune()


def drive_recorded(live: LiveThread, graph_input: GraphInput, run_id: str) -> Iterator[RunEvent]:
    """:func:`drive` plus the records it implies: ``approval_request`` (once per request
    id; one asked again after a restart is not re-recorded) and ``run_end``."""
    end: RunEnded | None = None
    request: ApprovalRequested | None = None
    usage = RunUsage()
    # the index catches up with the run's records once, when the run has ended (the
    # steps never wait for it; readers of this session catch up from the log first)
    with live.writer.index_deferred():
        for event in drive(live, graph_input, run_id):
            usage.add(event)
            if isinstance(event, ApprovalRequested):
                request = event
                live.approvals.record(live.writer, event.request_id, event.run_id,
                                      event.tool_calls)  # fmt: skip
            if isinstance(event, RunEnded):
                end = event
                continue
            yield event
        assert end is not None
        live.approvals.ended(end, request)
        fields: dict[str, Any] = {"run_id": run_id, "status": end.status}
        if end.error:
            fields["error"] = end.error
        fields["usage"] = usage.record(live.ctx.price)
        live.writer.append("run_end", **fields)
    yield end


def drive(live: LiveThread, graph_input: GraphInput, run_id: str) -> Iterator[RunEvent]:
    """Yield the run's events, ending with a :class:`RunEnded` (not yet written to the log)."""
    from langgraph.types import Command

    error: str | None = None
    try:
        try:
            seen = _Seen()
            yield from _stream(live, graph_input, seen)
            # A stop that raced with tool_routing: cancel the calls instead of asking.
            while live.stopping and seen.interrupts:
                request = seen.interrupts[0].value
                cancel = {c["call_id"]: "cancel" for c in request.get("tool_calls", [])}
                resume = {"request_id": request.get("request_id"), "decisions": cancel}
                yield from _stream(live, Command(resume=resume), seen)
        except ToolPairingError as exc:
            error = f"refusing to call the model: {exc}"
        except Exception as exc:  # a bug or an I/O failure: end the run, keep the session
            error = f"run failed: {type(exc).__name__}: {exc}"
            if disk_full(exc):
                error = f"run failed: {DISK_FULL_TEXT}"
            if live.debug:
                import traceback

                traceback.print_exc()
            yield from _close_after_failure(live, run_id)
        if error is not None:
            record = {
                "id": new_message_id(),
                "role": "assistant",
                "content": error,
                "status": "error",
            }
            live.writer.append("transcript_message", message=record)
            yield MessageAdded(record)
            live.prune()
            yield RunEnded(run_id, "error", error)
            return
        yield from _ending(seen, run_id)
        problem = live.prune()
        if problem:
            yield Notice("warning", problem)
    except GeneratorExit:
        # The consumer went away (a closed pipe, a stop): prune quietly, never yield here.
        live.prune()
        raise


def _ending(state: _Seen, run_id: str) -> Iterator[RunEvent]:
    for intr in state.interrupts:
        value = intr.value
        if isinstance(value, dict) and value.get("request_id"):
            yield ApprovalRequested(
                value["request_id"],
                value.get("run_id") or run_id,
                list(value.get("tool_calls") or []),
            )
            yield RunEnded(run_id, "awaiting_approval")
            return
    values = state.values
    reason = values.get("stop_reason")
    if reason == "stopped":
        yield RunEnded(run_id, "stopped")
    elif reason == "error":
        yield RunEnded(run_id, "error", values.get("error") or "model error")
    elif reason == "step_limit":
        text = STEP_LIMIT_TEXT.format(n=values.get("step_count", 0))
        yield Notice("warning", text)
        yield RunEnded(run_id, "error", text)
    else:
        yield RunEnded(run_id, "completed")


def _close_after_failure(live: LiveThread, run_id: str) -> Iterator[RunEvent]:
    """After an unexpected failure, answer the calls it left open (never re-run them)."""
    from .repair import close_open_calls

    events: list[RunEvent] = []
    try:
        close_open_calls(
            live.graph,
            live.config,
            live.journal,
            events.append,
            dispatched=live.journal.open_dispatches,
            run_id=run_id,
        )
    except Exception as exc:
        events.append(Notice("error", f"could not close open tool calls: {exc}"))
    yield from events
