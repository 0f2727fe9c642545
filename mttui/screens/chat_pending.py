"""Queue and Steer in the chat screen (pending.md): keys, the lane, the drain.

:class:`PendingChat` is the chat screen's base class; the chat screen mounts the
:class:`~mttui.widgets.pending_lane.PendingLane` and calls three hooks:
``pending_opened`` (open worker), ``pending_submit`` (enter) and ``pending_run``
(send worker: the run, then the queue). Writes happen in thread workers; the
lane is drawn from the in-memory state of ``PendingInputs``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from textual import work
from textual.actions import SkipAction
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from mttui.graph import events as ev
from mttui.messages import RunEventMessage
from mttui.widgets.pending_lane import EditQueuedScreen, LaneAction, PendingLane
from mttui.widgets.prompt import PromptArea

if TYPE_CHECKING:
    from mttui.graph.pending_runtime import PendingInputs

BUSY = ("starting", "running", "stopping", "awaiting approval")


class PendingChat(Screen[None]):
    """The pending-input side of the chat screen (see the module docstring)."""

    BINDINGS = [
        Binding("ctrl+s", "steer", "Steer", id="steer"),
        Binding("ctrl+r", "resume_queue", "Resume / pause queue", id="resume_queue",
                show=False),
        Binding("up", "edit_last", "Edit the last queued item (empty prompt)",
                id="edit_last_queued", show=False, priority=True),
    ]
    # provided by the chat screen
    chat: Any
    state: str
    _drive: Callable[..., None]
    _resume: Callable[[], Any]
    _set_state: Callable[..., None]
    _send: Callable[[str], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending_obj: PendingInputs | None = None
        self._pending_lock = threading.Lock()
        self._ro_rows: list[dict[str, Any]] = []  # before this process writes the session
        self._ro_held = False
        self._receipts: list[str] = []  # steers read during the current run
        self._draining = False
        self._last_end: str | None = None
        self._leaving = False

    @property
    def lane(self) -> PendingLane:
        return self.query_one(PendingLane)

    def _pending(self) -> PendingInputs | None:
        """The session's pending inputs once it is open for writing (worker threads)."""
        with self._pending_lock:
            writer = self.chat.writer
            if writer is not None and (self._pending_obj is None
                                       or self._pending_obj.writer is not writer):
                from mttui.graph.pending_runtime import PendingInputs

                self._pending_obj = PendingInputs(writer, self.chat.runner)
            return self._pending_obj

    @property
    def busy(self) -> bool:
        return self.state in BUSY or self._draining

    # -- hooks the chat screen calls ------------------------------------------------
    def pending_opened(self) -> None:
        """Open worker: show what is pending (read-only; held when nobody writes it)."""
        from mttui.session.index.pending_rows import lane_of
        from mttui.session.lock import holder_pid

        info = self.chat.info
        path = info.path
        lane = lane_of(self.chat.service.layout, info.id, path)
        free = holder_pid(path) is None
        held = {i.id for i in lane.queue()} if free else set()
        stale = {i.id for i in lane.unread()} if free else set()
        self.app.call_from_thread(self._set_ro, lane.view(held, stale), bool(held))

    def _set_ro(self, rows: list[dict[str, Any]], held: bool) -> None:
        self._ro_rows, self._ro_held = rows, held
        self.refresh_lane()

    def pending_settle(self) -> None:
        """Resume worker: write what the restart rules imply (``PendingInputs.settle``)."""
        pending = self._pending()
        if pending is not None:
            pending.settle()
            self.app.call_from_thread(self.refresh_lane)

    def pending_submit(self, event: PromptArea.Submitted) -> bool:
        """``enter``: while a run is busy the text is queued (``True``: handled)."""
        if self.state == "read-only" or not self.busy:
            return False
        self._queue_text(event.prompt, event.text)
        return True

    def pending_run(self, start: Callable[[], Iterator[ev.RunEvent]]) -> None:
        """Send worker: the run, then what the queue holds (Steers first)."""
        pending = self._pending()
        if pending is not None:
            pending.settle()
        self._last_end = None
        self._drive(start)
        if self._last_end == "error" and pending is not None:
            pending.pause_queue()  # the model failed: the queue waits for Resume queue
            self.app.call_from_thread(self.refresh_lane)
            return
        self._drain()

    def _drain(self) -> None:
        pending = self._pending()
        if pending is None:
            return
        worker = get_current_worker()
        self._draining = True
        try:
            def stop() -> bool:
                return worker.is_cancelled or self._leaving or pending.writer.closed

            for events in pending.drain(stop=stop):
                self.app.call_from_thread(self._set_state, "starting")
                self._drive(lambda events=events: events)
        finally:
            self._draining = False

    def pending_leave(self) -> None:
        """The chat is closing: the drain stops after the current run (items stay)."""
        self._leaving = True

    def on_unmount(self) -> None:
        self._leaving = True

    # -- the lane ---------------------------------------------------------------------
    def refresh_lane(self) -> None:
        pending = self._pending_obj
        if pending is None:
            self.lane.show(self._ro_rows, held=self._ro_held)
            return
        rows = pending.items()
        read = {i.id: i for i in pending.read_steers()}
        was_unread = {r["id"] for r in self.lane.rows if r["state"] == "unread"}
        self._receipts += [i for i in was_unread if i in read and i not in self._receipts]
        rows += [read[i].as_json(None) for i in self._receipts if i in read]
        self.lane.show(rows, held=pending.is_held)

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        if isinstance(event, ev.RunEnded):
            self._last_end = event.status
        if isinstance(event, (ev.PendingChanged, ev.RunEnded, ev.RunStarted)):
            self.refresh_lane()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._receipts.clear()
            self.refresh_lane()

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

    def _edit(self, item: dict[str, Any]) -> None:
        def done(text: str | None) -> None:
            if text is not None and text.strip() and text != item["text"]:
                self._lane_op("edit", item, text=text)

        self.app.push_screen(EditQueuedScreen(item["position"], item["text"]), done)

    # -- keys -------------------------------------------------------------------------
    def action_steer(self) -> None:
        prompt = self.query_one("#prompt", PromptArea)
        if not prompt.text.strip():
            return
        if self.state == "read-only":
            self.notify("this session is open in another process", severity="error")
        elif self.busy:
            self._steer_text(prompt, prompt.text)
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
        elif waiting and not self.lane.held and self._pending_obj is not None:
            self._lane_op("pause", None)
        elif self.busy:
            self._lane_op("resume", None)
        elif self.chat.info is not None:
            self._set_state("starting")
            self._resume_and_drain()

    # -- workers ----------------------------------------------------------------------
    @work(thread=True, group="run", exit_on_error=False, name="resume queue")
    def _resume_and_drain(self) -> None:
        if not self.chat.open_for_writing():
            self.app.call_from_thread(self.notify, self.chat.read_only or "read-only",
                                      severity="error")  # fmt: skip
            return
        if not self.chat.resumed:
            asked = self._resume()
            if asked is not None:  # an approval waits: it comes first
                self._drive(lambda: iter(()), asked)
        pending = self._pending()
        assert pending is not None
        pending.settle()
        pending.resume_queue()
        self.app.call_from_thread(self.refresh_lane)
        self._drain()

    def _open_pending(self) -> PendingInputs | None:
        if self.chat.writer is None and self.chat.info is not None:
            self.chat.open_for_writing()
        pending = self._pending()
        if pending is None:
            self.app.call_from_thread(self.notify, self.chat.read_only or
                                      "this session cannot be written", severity="error")
        return pending

    def _report(self, call: Callable[[], Any]) -> bool:
        from mttui.session.errors import MttuiError

        try:
            call()
        except MttuiError as exc:  # one line, nothing lost (the text stays where it was)
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return False
        return True

    @work(thread=True, group="pending", exit_on_error=False, name="queue")
    def _queue_text(self, prompt: PromptArea, text: str) -> None:
        pending = self._open_pending()
        if pending is not None and self._report(lambda: pending.add(text)):
            self.app.call_from_thread(self._accepted, prompt, text, "queued")

    @work(thread=True, group="pending", exit_on_error=False, name="steer")
    def _steer_text(self, prompt: PromptArea, text: str) -> None:
        pending = self._open_pending()
        if pending is not None and self._report(lambda: pending.steer(text)):
            self.app.call_from_thread(self._accepted, prompt, text, "steer")

    def _accepted(self, prompt: PromptArea, text: str, what: str) -> None:
        if prompt.text == text:  # not if the user typed on meanwhile
            prompt.clear()
        self.refresh_lane()
        if what == "steer" and not self.busy:  # the run ended meanwhile: take it now
            self._set_state("starting")
            self._resume_and_drain()

    @work(thread=True, group="pending", exit_on_error=False, name="pending input")
    def _lane_op(self, action: str, item: dict[str, Any] | None, *, text: str = "",
                 then_send: bool = False) -> None:
        pending = self._open_pending()
        if pending is None:
            return
        it = item or {"id": "", "position": None}
        ops: dict[str, Callable[[], Any]] = {
            "edit": lambda: pending.edit(it["id"], text),
            "up": lambda: pending.move(it["id"], max(1, (it["position"] or 1) - 1)),
            "down": lambda: pending.move(it["id"], (it["position"] or 0) + 1),
            "remove": lambda: pending.remove(it["id"]),
            "retry": lambda: pending.retry(it["id"]),
            "resume": pending.resume_queue,
            "pause": pending.pause_queue,
        }  # fmt: skip
        done = self._report(ops[action])
        self.app.call_from_thread(self.refresh_lane)
        if done and then_send and item is not None:  # a steer never delivered: send again
            self.app.call_from_thread(self._send_again, item["text"])
        elif done and action in ("retry", "resume"):
            self.app.call_from_thread(self._kick)

    def _send_again(self, text: str) -> None:
        if self.busy:
            self._queue_text(self.query_one("#prompt", PromptArea), text)
        else:
            self._set_state("starting")
            self._send(text)

    def _kick(self) -> None:
        if not self.busy and self.state != "read-only":
            self._set_state("starting")
            self._resume_and_drain()
