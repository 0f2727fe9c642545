"""The chat screen: the history of one session, the prompt and the run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState, get_current_worker

from mttui.graph import events as ev
from mttui.messages import BackToBrowser, OpenSession, RunEventMessage
from mttui.session.models import SearchHit, SearchScope
from mttui.widgets.history import HistoryView
from mttui.widgets.history_items import Marker
from mttui.widgets.live import LiveTranscript
from mttui.widgets.markers import scan_markers
from mttui.widgets.pending_lane import PendingLane
from mttui.widgets.prompt import PromptArea
from mttui.widgets.session_table import Clock
from mttui.widgets.status import StatusBar, last_usage
from mttui.widgets.text import literal
from mttui.widgets.workers import report_worker_error

from .approval import ApprovalDecision, ApprovalScreen
from .chat_pending import PendingChat
from .chat_session import ChatSession, RuntimeFactory
from .search import SearchScreen


class ChatScreen(PendingChat):  # Queue/Steer: chat_pending.py
    DEFAULT_CSS = """
    ChatScreen #chat-bar { height: 1; background: $panel; padding: 0 1; }
    ChatScreen HistoryView { height: 1fr; }
    ChatScreen #pending-lane { height: auto; display: none; }
    ChatScreen #pending-lane.-visible { display: block; }
    """
    BINDINGS = [
        Binding("escape", "stop", "Stop", id="stop"),
        Binding("ctrl+k", "compact", "Compact", id="compact", priority=True),
        Binding("ctrl+f", "search", "Search", id="search_session"),
        Binding("ctrl+o", "back", "Sessions", id="back"),
        Binding("pageup", "page(-1)", "Scroll up", id="page_up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Scroll down", id="page_down", show=False,
                priority=True),
    ]
    AUTO_FOCUS = "PromptArea"

    def __init__(self, service: Any, settings: Any, factory: RuntimeFactory, clock: Clock, *,
                 session_id: str | None = None, around: int | None = None) -> None:
        super().__init__()
        self.service = service
        self.settings = settings
        self.clock = clock
        self.chat = ChatSession(service, settings, factory)
        self.session_id = session_id
        self.around = around
        self.state = "opening" if session_id else "idle"
        self._answer: Future[ApprovalDecision | None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="chat-bar")
        yield HistoryView(self._page, id="history")
        yield PendingLane(id="pending-lane")
        yield PromptArea(placeholder="Message  (enter sends · ctrl+j newline · f1 help)",
                         id="prompt")
        s = self.settings
        yield StatusBar(provider=s.provider, model=s.model, approval=s.approval,
                        token_limit=s.token_limit, id="status")
        yield Footer()

    @property
    def history(self) -> HistoryView:
        return self.query_one(HistoryView)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    def _page(self, **query: Any) -> Any:
        sid = self.chat.session_id
        if sid is None:
            from mttui.session.models import HistoryPage

            return HistoryPage("", [], False, None)
        return self.service.history(sid, **query)

    def on_mount(self) -> None:
        self.live = LiveTranscript(self.history)
        self._bar()
        self._set_state(self.state)
        if self.session_id is None:
            self.history.load_newest()
        else:
            self._open(self.session_id)

    def _bar(self, extra: str = "") -> None:
        info = self.chat.info
        bar = Text("mttui", style="bold")
        if info is None and self.session_id is None:
            bar.append("  new session", style="dim")
        elif info is not None:
            bar.append("  " + literal(info.title or "(untitled)"), style="bold")
            bar.append(f"  ·  {info.id}", style="dim")
        if extra:
            bar.append("  ·  " + extra, style="yellow")
        self.query_one("#chat-bar", Static).update(bar)

    def _set_state(self, state: str, note: str | None = None) -> None:
        self.state = state
        self.status.state = state
        if note is not None:
            self.status.note = note
        self.query_one(PromptArea).set_class(state not in ("idle", "read-only"), "-busy")

    # -- opening --------------------------------------------------------------
    @work(thread=True, group="open", exit_on_error=False, name="opening the session")
    def _open(self, session_id: str) -> None:
        info = self.chat.load(session_id)
        used = last_usage(self.service, info.id)
        self.app.call_from_thread(self._opened, scan_markers(info.path), used)
        self.pending_opened()
        if not self.chat.writable():
            self.app.call_from_thread(self._read_only)
            return
        if info.status.awaiting_approval or info.status.interrupted_tools:
            # Something to repair or to ask: resume now. Otherwise reading writes
            # nothing, and the resume is applied right before the first send.
            if not self.chat.open_for_writing():
                self.app.call_from_thread(self._read_only)
                return
            pending = self._resume()
            if pending is not None:
                self.app.call_from_thread(self._ask_again, pending)
                return
        self.app.call_from_thread(self._set_state, "idle")

    def _resume(self) -> ev.ApprovalRequested | None:
        """Apply the resume (worker thread); show its warnings where it happened."""
        mode, warnings, pending = self.chat.resume()
        self.pending_settle()  # steers a stopped process never read become errors
        assert self.chat.info is not None
        markers = scan_markers(self.chat.info.path)
        resumed = [m for m in markers if m.kind == "resumed"]
        if warnings and resumed:  # the record has codes; show the full messages
            resumed[-1].data = {**resumed[-1].data, "warnings": warnings}
        self.app.call_from_thread(self._resumed, markers, mode, bool(warnings))
        return pending

    def _opened(self, markers: list[Marker], used: tuple[int, bool] | None = None) -> None:
        self._bar()
        info = self.chat.info
        if info is not None:
            self.status.compressions = info.compression_count
        if used is not None:
            self.status.used, self.status.estimated = used
        self.history.set_markers(markers)
        if self.around is not None:
            self.history.load_around(self.around)
        else:
            self.history.load_newest()

    def _ask_again(self, pending: ev.ApprovalRequested) -> None:
        """An approval that was pending when the session stopped: ask it again."""
        self._set_state("awaiting approval")
        self._answer_pending(pending)

    @work(thread=True, group="run", exit_on_error=False, name="run")
    def _answer_pending(self, pending: ev.ApprovalRequested) -> None:
        self._drive(lambda: iter(()), pending)

    def _read_only(self, unsent: str = "") -> None:
        self._set_state("read-only", note=self.chat.read_only or "")
        self._bar("read-only")
        prompt = self.query_one(PromptArea)
        if unsent:
            prompt.text = unsent  # nothing typed is lost
        prompt.disabled = True
        self.notify(self.chat.read_only or "read-only", title="Session is read-only",
                    severity="warning")

    def _resumed(self, markers: list[Marker], mode: str, warned: bool) -> None:
        self.history.set_markers(markers)
        if not self.history.has_newer and (warned or self.around is None):
            self.history.load_newest()
        if mode != "execution":
            self.notify(f"resumed in {mode} mode", severity="warning")

    # -- sending and running --------------------------------------------------
    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        command = event.text.strip()
        if command == "/compact" or command.startswith("/compact "):  # /compact [instructions]
            if self.action_compact(command[len("/compact"):].strip() or None):
                event.prompt.clear()
            return
        if self.state == "read-only":
            self.notify("this session is open in another process", severity="error")
            return
        if self.pending_submit(event):  # busy: queued
            return
        if self.state != "idle":
            self.notify("a run is active: wait for it or press escape to stop it",
                        severity="warning")
            return
        text = event.text
        event.prompt.clear()
        if self.history.has_newer:
            self.history.load_newest()
        self._set_state("starting")
        self._send(text)

    @work(thread=True, group="run", exit_on_error=False, name="run")
    def _send(self, text: str) -> None:
        if self.chat.info is None:
            self.chat.create(text)
            self.app.call_from_thread(self._bar)
        elif not self.chat.open_for_writing():
            self.app.call_from_thread(self._read_only, text)
            return
        elif not self.chat.resumed:
            pending = self._resume()
            if pending is not None:  # answer what was pending first, then send
                self._drive(lambda: iter(()), pending)
        self.pending_run(self.chat.events("run", text))  # the run, then the queue

    def _drive(self, start: Callable[[], Iterator[ev.RunEvent]],
               pending: ev.ApprovalRequested | None = None) -> None:
        """Run events until the run ends, asking for approvals on the way (worker thread)."""
        worker = get_current_worker()
        compressed: list[ev.Compressed] = []

        def emit(event: ev.RunEvent) -> None:
            if isinstance(event, ev.Compressed):
                compressed.append(event)
            self.post_message(RunEventMessage(event))

        try:
            self.chat.drive(start, emit=emit, ask=lambda request: self._ask(request, worker),
                            pending=pending)
        finally:
            if compressed and self.chat.info is not None:  # kept by the resync after the run
                self.app.call_from_thread(self.history.set_markers,
                                          scan_markers(self.chat.info.path))

    def _ask(self, request: ev.ApprovalRequested, worker: Any) -> ApprovalDecision | None:
        diffs = self.chat.diffs(request)
        answer: Future[ApprovalDecision | None] = Future()
        self._answer = answer
        self.app.call_from_thread(self._show_approval, request, diffs, answer)
        while not worker.is_cancelled:
            try:
                return answer.result(timeout=0.25)
            except FutureTimeout:
                continue
        return None

    def _show_approval(self, request: ev.ApprovalRequested, diffs: dict[str, str],
                       answer: Future[ApprovalDecision | None]) -> None:
        self._set_state("awaiting approval")
        self.app.push_screen(ApprovalScreen(request, diffs), answer.set_result)

    def on_run_event_message(self, message: RunEventMessage) -> None:
        event = message.event
        self.live.apply(event)
        if isinstance(event, (ev.RunStarted, ev.ApprovalDecided)):
            self._set_state("running")
        elif isinstance(event, ev.UsageUpdated):
            self.status.used = event.input_tokens + event.output_tokens
            self.status.estimated = event.estimated
        elif isinstance(event, ev.Compressed):
            self.status.compressions += 1
            self.status.used = event.tokens_after
        elif isinstance(event, ev.Notice) and event.level == "info":
            self.notify(event.text, timeout=4)
        elif isinstance(event, ev.RunEnded) and event.status != "awaiting_approval":
            self._set_state("idle")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)
        if event.worker.group == "run" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.live.flush()
            if self.state != "read-only":
                self._set_state("idle")
            if not self.history.has_newer:
                self.history.load_newest()  # resync with the log (seqs, closed calls)
        elif event.worker.group == "open" and event.state == WorkerState.ERROR:
            self._set_state("read-only", note="could not open the session")

    # -- keys -----------------------------------------------------------------
    def action_stop(self) -> None:
        if self.state in ("running", "starting") and self.chat.runner is not None:
            self.chat.runner.stop()
            self._set_state("stopping")
        else:
            self.query_one(PromptArea).focus()

    def action_page(self, direction: int) -> None:
        if direction < 0:
            self.history.scroll_page_up(animate=False)
        else:
            self.history.scroll_page_down(animate=False)

    def action_compact(self, instructions: str | None = None) -> bool:
        """``ctrl+k`` / ``/compact [instructions]``: compress the history now."""
        if self.state != "idle" or self.chat.info is None:
            self.notify("compaction needs an idle session with messages", severity="warning")
            return False
        self._set_state("running", note="compacting…")
        self._compact(instructions)
        return True

    @work(thread=True, group="run", exit_on_error=False, name="compaction")
    def _compact(self, instructions: str | None = None) -> None:
        if not self.chat.open_for_writing():
            self.app.call_from_thread(self._read_only)
            return
        try:
            pending = None if self.chat.resumed else self._resume()
            if pending is not None:  # ask what was pending first; compact afterwards
                self._drive(lambda: iter(()), pending)
                return
            self._drive(self.chat.events("compact", instructions))
        finally:
            self.app.call_from_thread(self.status.clear_note)

    def action_search(self) -> None:
        def done(hit: SearchHit | None) -> None:
            if hit is None:
                return
            if hit.session_id == self.chat.session_id:
                self.history.load_around(hit.seq)
                self.history.focus()
            else:
                self.post_message(OpenSession(hit.session_id, around=hit.seq))

        scope: SearchScope = "session" if self.chat.session_id else "project"
        self.app.push_screen(SearchScreen(self.service, self.clock, scope=scope,
                                          session_id=self.chat.session_id), done)

    def action_back(self) -> None:
        self.post_message(BackToBrowser())

    # -- leaving --------------------------------------------------------------
    async def shutdown(self, grace: float = 15.0) -> None:
        """Stop a run, wait for it, then close the session (session_end, lock)."""
        self.pending_leave()  # no queued input starts from now on
        if self.chat.runner is not None:
            self.chat.runner.stop()
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(None)  # the approval stays pending (asked on resume)
        mine = [w for w in self.app.workers if w.node is self and w.group in ("run", "open")]
        for worker in mine:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), grace)
        await asyncio.to_thread(self.chat.close)

    def on_unmount(self) -> None:
        """The app is exiting without :meth:`shutdown` (e.g. ``app.exit()``): stop the
        run, give it a moment to record its end, then close the session."""
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(None)
        with contextlib.suppress(Exception):
            self.chat.close(wait=5.0)
