"""Driving runs to their end: events out, approvals asked, the queue drained.

The TUI and the CLI differ only in ``emit`` (draw or print) and ``ask`` (a dialog,
or ``--approve all|none|ask``); what happens to the session is decided here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from mttui.graph.events import ApprovalRequested, Notice, RunEnded, RunEvent, ToolFinished
from mttui.session import gc_pause
from mttui.session.pending import PendingError

from .handle import ApprovalAnswer, SessionHandle

Emit = Callable[[RunEvent], None]


class Approver(Protocol):
    """Answers an approval request, or ``None`` to leave it pending (asked on resume)."""

    def __call__(self, request: ApprovalRequested) -> ApprovalAnswer | None: ...


@dataclass(frozen=True)
class Outcome:
    """How driving ended: the last ``RunEnded`` (``None``: no run started), an approval
    left waiting, whether an error was reported, and what became of a message that
    could not be sent yet (``queued``: its queue item id; ``not_sent``: why not)."""

    end: RunEnded | None = None
    waiting: ApprovalRequested | None = None
    failed: bool = False
    queued: str | None = None
    not_sent: str | None = None

    @property
    def status(self) -> str | None:
        return self.end.status if self.end is not None else None


def drive(handle: SessionHandle, events: Iterator[RunEvent] | None, *, emit: Emit,
          ask: Approver, pending: ApprovalRequested | None = None) -> Outcome:
    """Pass a run's events to ``emit`` until it ends; when it waits for an approval,
    ``ask`` and go on with the answer. ``pending``: an approval to ask first."""
    end: RunEnded | None = None
    failed = False
    request = pending
    while True:
        if events is not None:
            request = None
            with gc_pause.no_full_collections():  # no screen freezes while it streams
                for event in events:
                    emit(event)
                    if isinstance(event, ApprovalRequested):
                        request = event
                    elif isinstance(event, RunEnded):
                        end = event
                    elif isinstance(event, ToolFinished):
                        gc_pause.quiet_point()  # a long run's garbage, between its steps
                    failed = failed or (isinstance(event, Notice) and event.level == "error")
            if end is None or end.status != "awaiting_approval" or request is None:
                return Outcome(end, None, failed)
        if request is None:
            return Outcome(end, None, failed)
        answer = handle.logged_answer(request) or ask(request)  # decided: never asked twice
        if answer is None:
            return Outcome(end, request, failed)
        events = handle.answer(request, answer)


def send(handle: SessionHandle, text: str, *, emit: Emit, ask: Approver,
         stopped: Callable[[], bool] = lambda: False) -> Outcome:
    """One user message: resume first if needed, answer an approval that waits (asked
    again), then run ``text``. When that approval is left unanswered, or its run did
    not complete, the text joins the queue instead of being dropped."""
    handle.resume()
    waiting = handle.waiting_approval()
    if waiting is not None:
        first = drive(handle, None, emit=emit, ask=ask, pending=waiting)
        if first.waiting is not None or first.status not in (None, "completed") or stopped():
            return _queued(handle, text, first)
    if stopped():
        return Outcome()
    return drive(handle, handle.run(text), emit=emit, ask=ask)


def _queued(handle: SessionHandle, text: str, outcome: Outcome) -> Outcome:
    try:
        item = handle.pending.add(text)
    except PendingError as exc:
        return replace(outcome, not_sent=str(exc))
    return replace(outcome, queued=item.id)


def answer_waiting(handle: SessionHandle, *, emit: Emit, ask: Approver) -> Outcome:
    """Resume, then ask the approval the session waits for (if any) and go on."""
    handle.resume()
    waiting = handle.waiting_approval()
    if waiting is None:
        decided = handle.continuation()  # a decided run never finished goes on
        return Outcome() if decided is None else drive(handle, decided, emit=emit, ask=ask)
    return drive(handle, None, emit=emit, ask=ask, pending=waiting)


def drain(handle: SessionHandle, *, emit: Emit, ask: Approver,
          stop: Callable[[], bool]) -> Iterator[Outcome]:
    """Run what the lane holds while idle, one run after the other (unread Steers first,
    then the queue head unless held); the caller may stop between runs."""
    for events in handle.pending.drain(stop=stop):
        yield drive(handle, events, emit=emit, ask=ask)


def resume_queue(handle: SessionHandle, *, emit: Emit, ask: Approver,
                 stop: Callable[[], bool]) -> Iterator[Outcome]:
    """The user's "Resume queue": an approval that waits comes first; then nothing is
    held any more and the queue is drained."""
    first = answer_waiting(handle, emit=emit, ask=ask)
    if first.end is not None or first.waiting is not None:
        yield first
        if first.waiting is not None or first.status not in ("completed", "stopped"):
            return
    handle.pending.settle()
    handle.pending.resume_queue()
    yield from drain(handle, emit=emit, ask=ask, stop=stop)


