"""Queue and Steer in the chat screen (pending.md): keys, the lane, the drain.

:class:`PendingChat` is the chat screen's base class. The lane is drawn from
rows that workers read and post (:class:`LaneRows`): the event loop never waits
on the lane's lock, which a writer holds during an fsync.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.actions import SkipAction
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from mttui.core.chat_session import ChatSession
from mttui.core.drive import Outcome, drain
from mttui.core.handle import ApprovalAnswer
from mttui.graph import events as ev
from mttui.messages import RunEventMessage
from mttui.session.errors import MttuiError
from mttui.widgets.pending_lane import EditQueuedScreen, LaneAction, PendingLane
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar

from .chat_messages import (
    Accepted,
    Kick,
    LaneRows,
    Note,
    OutboxWritten,
    SendAgain,
    StateChanged,
)
from .chat_outbox import Outbox

if TYPE_CHECKING:
    from mttui.core.pending import PendingInputs

BUSY = ("starting", "running", "stopping", "awaiting approval")
CREATE_WAIT = 60.0  # seconds a queued text waits for its new session to be created
Row = dict[str, Any]


class PendingChat(Screen[None]):
    """The pending-input side of the chat screen (see the module docstring)."""

    BINDINGS = [
        Binding("ctrl+s", "steer", "Steer", id="steer"),
        Binding("ctrl+r", "resume_queue", "Resume / pause queue", id="resume_queue",
                show=False),
        Binding("alt+up", "edit_last", "Edit the last queued item (empty prompt)",
                id="edit_last_queued", show=False, priority=True),
    ]
    state: reactive[str] = reactive("idle", init=False)
    chat: ChatSession

    def __init__(self) -> None:
        super().__init__()
        self._receipts: list[str] = []  # steers read during the current run
        self._draining = False
        self._held_send: str | None = None  # enter pressed while the session opened
        self.outbox = Outbox(self)  # texts entered while busy, queued in order
        self.leaving = False

    # what the chat screen provides
    def emit(self, event: ev.RunEvent) -> None:
        raise NotImplementedError

    def ask(self, request: ev.ApprovalRequested) -> ApprovalAnswer | None:
        raise NotImplementedError

    def resume_now(self) -> ev.ApprovalRequested | None:
        raise NotImplementedError

    def send_text(self, text: str) -> object:
        raise NotImplementedError

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def lane(self) -> PendingLane:
        return self.query_one(PendingLane)

    def _pending(self) -> PendingInputs | None:
        """The session's pending inputs once it is open for writing (worker threads)."""
        handle = self.chat.handle
        return handle.pending if handle is not None else None

    @property
    def busy(self) -> bool:
        """A run goes (also between the runs of a drain, and until its worker ended)."""
        return self.state in BUSY or self._draining or any(
            w.group == "run" and w.node is self and not w.is_finished for w in self.workers)

    # -- hooks the chat screen calls (worker threads) ----------------------------------
    def pending_opened(self) -> None:
        """Open worker: show what is pending (read-only; held when nobody writes it)."""
        from mttui.core.lane_view import lane_view

        info = self.chat.info
        assert info is not None
        view = lane_view(self.chat.service.layout, info.id, info.path)
        self.post_message(LaneRows(view.rows, view.held))

    def post_lane(self) -> None:
        """Read this process's lane (worker thread) and post it to the screen."""
        pending = self._pending()
        if pending is not None:
            rows: list[Row] = list(pending.items())
            rows += [i.as_json(None) for i in pending.read_steers()]
            self.post_message(LaneRows(rows, pending.is_held, live=True))

    def after_run(self, outcome: Outcome) -> None:
        """Send worker: after the run, what the queue holds (Steers first); a failed
        model holds the queue until the user resumes it."""
        pending = self._pending()
        if outcome.status == "error" and pending is not None:
            pending.pause_queue()
            self.post_lane()
            return
        self.drain_now()

    def drain_now(self) -> None:
        if self._pending() is None:
            return
        worker = get_current_worker()
        handle = self.chat.handle
        assert handle is not None
        self._draining = True
        try:
            def stop() -> bool:
                return worker.is_cancelled or self.leaving or handle.writer.closed

            def emit(event: ev.RunEvent) -> None:
                if isinstance(event, ev.PendingChanged) and event.reason == "taken":
                    self.post_message(StateChanged("starting"))
                self.emit(event)

            for _ in drain(handle, emit=emit, ask=self.ask, stop=stop):
                pass
        finally:
            self._draining = False

    def pending_leave(self) -> None:
        """The chat is closing: the drain stops after the current run (items stay)."""
        self.leaving = True

    async def on_unmount(self) -> None:
        self.leaving = True

    # -- the lane (event loop) ----------------------------------------------------------
    def on_lane_rows(self, message: LaneRows) -> None:
        rows = message.rows
        if message.live:
            # steers read during this run stay visible as receipts until it ends
            read = {str(r["id"]): r for r in rows if r.get("state") == "read"}
            was_unread = {r["id"] for r in self.lane.rows if r["state"] == "unread"}
            self._receipts += [i for i in read if i in was_unread and i not in self._receipts]
            rows = [r for r in rows if r.get("state") != "read"]
            rows += [read[i] for i in self._receipts if i in read]
        self.lane.show(rows, held=message.held)

    @work(thread=True, group="lane", exclusive=True, exit_on_error=False, name="pending lane")
    def refresh_lane(self) -> None:
        self.post_lane()

    def on_run_event_message(self, message: RunEventMessage) -> None:
        if isinstance(message.event, (ev.PendingChanged, ev.RunEnded, ev.RunStarted)):
            self.refresh_lane()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._receipts.clear()
            self.refresh_lane()
            if self.outbox.late:  # once the screen is idle again (chat.py)
                self.call_after_refresh(self._drain_if_idle)

    def on_pending_lane_act(self, message: PendingLane.Act) -> None:
        item, action = message.item, message.action
        if action is LaneAction.RESUME:
            self.action_resume_queue()
        elif item is None:
            return
        elif item["mode"] == "steer":
            if item["state"] == "failed" and action in (LaneAction.RETRY, LaneAction.REMOVE):
                self._lane_op("remove", item, then_send=action is LaneAction.RETRY)
            else:
                self.notify("a steer is already part of the conversation", severity="warning")
        elif action is LaneAction.EDIT:
            self._edit(item)
        else:
            self._lane_op(action, item)

    def _edit(self, item: Row) -> None:
        def done(text: str | None) -> None:
            if text is not None and text.strip() and text != item["text"]:
                self._lane_op("edit", item, text=text)

        self.app.push_screen(EditQueuedScreen(item["position"], str(item["text"])), done)

    # -- keys -----------------------------------------------------------------------------
    def pending_submit(self, event: PromptArea.Submitted) -> bool:
        """``enter``: while a run is busy the text is queued; while the session is still
        opening it is held and sent once it is open (``True``: handled)."""
        if self.state == "opening":
            self._held_send = event.text
            self.status.note = "sends when the session is open"
            return True
        if self.state == "read-only" or not (self.busy or self.outbox.waiting):
            return False  # idle, nothing entered before it waits: sent now
        event.take()  # the prompt stays empty; a refusal gives the text back (Unsent)
        self.outbox.add(event.text)
        return True

    def on_outbox_written(self, message: OutboxWritten) -> None:
        if self.outbox.written():
            self._drain_if_idle()

    def _drain_if_idle(self) -> None:
        """Nothing runs, something may wait in the queue (written after the last run's
        drain looked): run it as the drain would (a held queue stays held)."""
        self.outbox.late = False
        if not self.busy and self.state == "idle" and not self.leaving \
                and self.chat.handle is not None:
            self.state = "starting"
            self._drain_queued()

    def release_held_send(self) -> None:
        """The open ended (``state`` left "opening"): an Enter pressed meanwhile is taken
        now, as if pressed at this moment — unless the text was changed since."""
        held, self._held_send = self._held_send, None
        if held is None or self.leaving or self.app.screen is not self:
            return  # the chat was left meanwhile: nothing is sent from a closed screen
        self.status.note = ""
        prompt = self.query_one("#prompt", PromptArea)
        if prompt.text == held:
            prompt.action_submit()

    def cancel_held_send(self) -> bool:
        """``escape`` while an Enter is held for the open: it is not sent (text kept)."""
        if self._held_send is None:
            return False
        self._held_send = None
        self.status.note = "not sent: press enter again to send"
        return True

    def action_steer(self) -> None:
        prompt = self.query_one("#prompt", PromptArea)
        if not prompt.text.strip():
            return
        if self.state == "read-only":
            self.notify("this session is open in another process", severity="error")
        elif self.busy:
            self._steer_text(prompt.text)
        else:
            prompt.action_submit()  # idle: a Steer is simply a normal send

    def action_edit_last(self) -> None:
        focused = self.focused
        queued = [r for r in self.lane.rows if r["mode"] == "queue"]
        if not isinstance(focused, PromptArea) or focused.id != "prompt" or focused.text \
                or not queued:
            raise SkipAction()
        self._edit(queued[-1])

    def action_resume_queue(self) -> None:
        """Resume a held queue; pause (hold) one that would run next."""
        waiting = any(r["mode"] == "queue" for r in self.lane.rows)
        if self.state == "read-only":
            self.notify("this session is open in another process", severity="error")
        elif waiting and not self.lane.held and self.chat.handle is not None:
            self._lane_op("pause", None)
        elif self.busy:
            self._lane_op("resume", None)
        elif self.chat.info is not None:
            self.state = "starting"
            self._resume_and_drain()

    @on(Accepted)
    def _accepted(self, message: Accepted) -> None:
        prompt = self.query_one("#prompt", PromptArea)
        if prompt.text.startswith(message.text):  # given back; what was typed since stays
            prompt.text = prompt.text[len(message.text):]
            prompt.move_cursor(prompt.document.end)
        if message.what == "steer" and not self.busy:  # the run ended meanwhile: take it
            self.state = "starting"
            self._resume_and_drain()

    # -- workers --------------------------------------------------------------------------
    @work(thread=True, group="run", exit_on_error=False, name="resume queue")
    def _resume_and_drain(self) -> None:
        if self.chat.open_for_writing() is None:
            self.post_message(Note(self.chat.read_only or "read-only", "error"))
            return
        if not self.chat.resumed:
            asked = self.resume_now()
            if asked is not None:  # an approval waits: it comes first
                from mttui.core.drive import drive

                assert self.chat.handle is not None
                drive(self.chat.handle, None, emit=self.emit, ask=self.ask,
                      pending=asked)
        pending = self._pending()
        assert pending is not None
        pending.settle()
        pending.resume_queue()
        self.post_lane()
        self.drain_now()

    def open_pending(self) -> PendingInputs | None:
        if self.chat.info is None and (self.state in BUSY or self._draining):
            # A new chat's first message is still creating the session (the run
            # worker): what is queued meanwhile waits for it instead of being refused.
            self.chat.wait_created(CREATE_WAIT)
        if self.chat.handle is None and self.chat.info is not None:
            self.chat.open_for_writing()
        pending = self._pending()
        if pending is None:
            self.post_message(Note(self.chat.read_only or "this session cannot be written",
                                   "error"))
        return pending

    def _report(self, call: Callable[[], object]) -> bool:
        try:
            call()
        except MttuiError as exc:  # one line, nothing lost (the text stays where it was)
            self.post_message(Note(str(exc), "error"))
            return False
        return True

    @work(thread=True, group="run", exit_on_error=False, name="queue")
    def _drain_queued(self) -> None:
        self.drain_now()

    @work(thread=True, group="pending", exit_on_error=False, name="queue")
    def _queue_text(self, text: str) -> None:
        pending = self.open_pending()
        if pending is not None and self._report(lambda: pending.add(text)):
            self.post_lane()
            self.post_message(Accepted(text, "queued"))

    @work(thread=True, group="pending", exit_on_error=False, name="steer")
    def _steer_text(self, text: str) -> None:
        pending = self.open_pending()
        if pending is not None and self._report(lambda: pending.steer(text)):
            self.post_lane()
            self.post_message(Accepted(text, "steer"))

    @work(thread=True, group="pending", exit_on_error=False, name="pending input")
    def _lane_op(self, action: str, item: Row | None, *, text: str = "",
                 then_send: bool = False) -> None:
        pending = self.open_pending()
        if pending is None:
            return
        item_id = str(item["id"]) if item is not None else ""
        position = item["position"] if item is not None else None
        pos = position if isinstance(position, int) else 0
        ops: dict[str, Callable[[], object]] = {
            "edit": lambda: pending.edit(item_id, text),
            "up": lambda: pending.move(item_id, max(1, pos - 1)),
            "down": lambda: pending.move(item_id, pos + 1),
            "remove": lambda: pending.remove(item_id),
            "retry": lambda: pending.retry(item_id),
            "resume": pending.resume_queue,
            "pause": pending.pause_queue,
        }
        done = self._report(ops[action])
        self.post_lane()
        if done and then_send and item is not None:  # a steer never delivered: send again
            self.post_message(SendAgain(str(item["text"])))
        elif done and action in ("retry", "resume"):
            self.post_message(Kick())

    def on_send_again(self, message: SendAgain) -> None:
        if self.busy:
            self._queue_text(message.text)
        else:
            self.state = "starting"
            self.chat.starting()  # an earlier stop is not this send's
            self.send_text(message.text)

    def on_kick(self, message: Kick) -> None:
        """The queue may run again: start draining it if nothing runs."""
        if self.busy:  # the run's drain may have looked already: once it has ended
            self.outbox.late = True
        elif self.state != "read-only":
            self.state = "starting"
            self._resume_and_drain()
