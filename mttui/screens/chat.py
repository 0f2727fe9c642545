"""The chat screen: the history of one session, the prompt and the run. Workers do the
blocking work through :class:`~mttui.core.chat_session.ChatSession` and the use cases
of ``mttui.core``; what they find comes back as messages (``chat_messages``); the run
state is a reactive the status bar follows."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from mttui.config import Settings
from mttui.core.chat_session import ChatSession
from mttui.core.drive import drive
from mttui.core.handle import RunnerFactory
from mttui.core.view_tokens import opening_usage
from mttui.graph import events as ev
from mttui.messages import BackToBrowser, OpenSession, RunEventMessage, StreamWake
from mttui.session.models import HistoryPage, SearchHit, SearchScope
from mttui.session.service import SessionService
from mttui.widgets.completion import CompletionList
from mttui.widgets.delta_buffer import DeltaBuffer
from mttui.widgets.fit_footer import FitFooter
from mttui.widgets.header import Header, HeaderBar
from mttui.widgets.history import HistoryView
from mttui.widgets.live import LiveTranscript
from mttui.widgets.pending_lane import PendingLane
from mttui.widgets.prompt import PromptArea
from mttui.widgets.resume_notes import ResumeNotes
from mttui.widgets.session_table import Clock
from mttui.widgets.status import StatusBar
from mttui.widgets.workers import report_worker_error

from .chat_messages import (
    AskAgain,
    MarkersChanged,
    Note,
    Opened,
    ReadOnly,
    Resumed,
    StateChanged,
    StatusNote,
    TitleChanged,
    Unsent,
)
from .chat_rewind import (
    double_escape,
    fork_selected,
    rerun_selected,
    settle_selected,
)
from .chat_slash import SlashChat
from .search import SearchScreen


class ChatScreen(SlashChat):  # slash → keys → resume → compact → approval → pending
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
        Binding("ctrl+o", "back", "Sessions", id="back", priority=True),
        Binding("pageup", "page(-1)", "Scroll up", id="page_up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Scroll down", id="page_down", show=False, priority=True),
        Binding("alt+n", "fork_selected", "Fork here (history)", id="fork_here", show=False),
        Binding("alt+d", "settle('mark-done')", "Mark done", id="mark_done", show=False),
        Binding("alt+x", "settle('mark-failed')", "Mark failed", id="mark_failed", show=False),
        Binding("alt+r", "rerun_call", "Re-run", id="rerun_call", show=False),
    ]
    going_back = False  # ctrl+o pressed: closing, then the browser (app.py keeps the keys)
    AUTO_FOCUS = "PromptArea"

    def __init__(self, service: SessionService, settings: Settings, factory: RunnerFactory,
                 clock: Clock, *, session_id: str | None = None,
                 around: int | None = None) -> None:
        super().__init__()
        self.service = service
        self.settings = settings
        self.clock = clock
        self.chat = ChatSession(service, settings, factory)
        self.session_id = session_id
        self.around = around
        self.set_reactive(ChatScreen.state, "opening" if session_id else "idle")

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="chat-bar")
        yield Static(id="instructions-line")  # the AGENTS.md files loaded (chat_slash.py)
        yield HistoryView(self._page, id="history")
        yield PendingLane(id="pending-lane")
        yield ResumeNotes(id="resume-notes")
        yield CompletionList(id="completion")  # / commands and @ files (chat_slash.py)
        yield PromptArea(placeholder="Message  (enter sends · ctrl+j newline · f1 help)",
                         id="prompt")
        s = self.settings
        yield StatusBar(provider=s.provider, model=s.model, approval=s.approval,
                        token_limit=s.token_limit, id="status")
        yield FitFooter()

    @property
    def history(self) -> HistoryView:
        return self.query_one(HistoryView)

    def _page(self, **query: Any) -> HistoryPage:
        sid = self.chat.session_id
        if sid is None:
            return HistoryPage("", [], False, None)
        return self.service.history(sid, **query)

    def on_mount(self) -> None:
        self.live = LiveTranscript(self.history)
        self.deltas = DeltaBuffer(lambda: self.post_message(StreamWake()))
        self.read_project()
        self.refresh_bar()
        self.watch_state(self.state)
        if self.session_id is None:
            self.history.load_newest()
        else:
            self._open(self.session_id)

    def refresh_bar(self, extra: str = "") -> None:
        info = self.chat.info
        self.header = Header(info.title or "" if info is not None else None,
                             info.id if info is not None else None,
                             new=info is None and self.session_id is None,
                             path=self.project_path, branch=self.project_branch, extra=extra)
        self.fit_header()

    def watch_state(self, state: str) -> None:
        self.status.state = state
        self.query_one(PromptArea).set_class(state not in ("idle", "read-only"), "-busy")
        if state != "opening":
            self.call_after_refresh(self.release_held_send)

    # -- what the workers say ------------------------------------------------------
    def on_state_changed(self, message: StateChanged) -> None:
        if self.state != "read-only":
            self.state = message.state

    def on_status_note(self, message: StatusNote) -> None:
        self.status.note = message.text

    def on_note(self, message: Note) -> None:
        self.notify(message.text, title=message.title, severity=message.severity)  # type: ignore[arg-type]

    def on_title_changed(self, message: TitleChanged) -> None:
        self.refresh_bar()

    def on_markers_changed(self, message: MarkersChanged) -> None:
        self.history.set_markers(message.markers)

    def on_opened(self, message: Opened) -> None:
        self.refresh_bar()
        info = self.chat.info
        if info is not None:
            self.status.compressions = info.compression_count
        if message.used is not None:
            self.status.used, self.status.estimated = message.used
        self.history.set_markers(message.markers)
        if self.around is not None:
            self.history.load_around(self.around)
        else:
            self.history.load_newest()

    def on_resumed(self, message: Resumed) -> None:
        self.history.set_markers(message.markers)
        if not self.history.has_newer and (message.warned or self.around is None):
            self.history.load_newest()
        if message.mode != "execution":
            self.notify(f"resumed in {message.mode} mode", severity="warning")

    def on_read_only(self, message: ReadOnly) -> None:
        self.status.note = message.reason
        self.state = "read-only"
        self.refresh_bar("read-only")
        prompt = self.query_one(PromptArea)
        if message.unsent:
            prompt.text = message.unsent  # nothing typed is lost
        prompt.disabled = True
        self.notify(message.reason or "read-only", title="Session is read-only",
                    severity="warning")

    def on_ask_again(self, message: AskAgain) -> None:
        self.state = "awaiting approval"
        self._answer_pending(message.request)

    # -- opening (worker) --------------------------------------------------------------
    @work(thread=True, group="open", exit_on_error=False, name="opening the session")
    def _open(self, session_id: str) -> None:
        info = self.chat.load(session_id)
        markers = self.service.markers(info.id)
        self.post_message(Opened(markers, opening_usage(self.service, info.id, markers)))
        self.post_grants()
        self.pending_opened()
        self.load_prompts()
        if not self.chat.writable():
            self.post_message(ReadOnly(self.chat.read_only or ""))
            return
        # Reading writes nothing: what the resume will do is shown (an approval it
        # waits for is asked), and it is applied when the user first acts.
        self.post_message(StateChanged("idle"))
        self.preview_resume()

    def resume_now(self) -> ev.ApprovalRequested | None:
        """Apply the resume (worker thread); its warnings show where it happened."""
        resumed = self.chat.resume()
        assert self.chat.info is not None
        markers = self.service.markers(self.chat.info.id)
        marks = [m for m in markers if m.kind == "resumed"]
        if resumed.warnings and marks:  # the record has codes; show the full messages
            marks[-1].data = {**marks[-1].data, "warnings": resumed.warnings}
        self.post_message(Resumed(markers, resumed.mode, bool(resumed.warnings)))
        self.post_lane()
        return resumed.pending or resumed.decided  # a decided one is applied, not asked

    # -- sending and running -----------------------------------------------------------
    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        self._act_on(event)
        if not event.taken:  # refused, held, or queued (Accepted takes it): it stays
            event.prompt.give_back(event.text)

    def _act_on(self, event: PromptArea.Submitted) -> None:
        command = event.text.strip()
        if self.slash_submit(event):  # /rewind /fork /help /clear /model /usage /exit …
            return
        if command == "/compact" or command.startswith("/compact "):  # /compact [instructions]
            if self.start_compaction(command[len("/compact"):].strip() or None):
                event.take()
            return
        if command == "/permissions":  # the session's grants, revocable
            event.take()
            self.refresh_grants(show=True)
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
        event.take()
        if self.history.has_newer:
            self.history.load_newest()
        else:  # follow the conversation, also when it was scrolled up
            self.history.scroll_end(animate=False, immediate=True)
        self.state = "starting"
        self.chat.starting()
        self.send_text(text)

    @work(thread=True, group="run", exit_on_error=False, name="run")
    def send_text(self, text: str) -> None:
        if self.chat.info is None:
            handle = self.chat.create(text)
            self.post_message(TitleChanged())
        else:
            opened = self.chat.open_for_writing()
            if opened is None:
                self.post_message(ReadOnly(self.chat.read_only or "", text))
                return
            handle = opened
            if not handle.resumed:
                self.resume_now()
        outcome = self.chat.send(handle, text, emit=self.emit, ask=self.ask)
        if outcome.queued is not None:
            self.post_message(Note("the message was queued: it runs after the approval"))
        elif outcome.not_sent is not None:  # its text goes back into the prompt
            self.post_message(Unsent(text, outcome.not_sent))
        self.after_run(outcome)

    @work(thread=True, group="run", exit_on_error=False, name="run")
    def _answer_pending(self, pending: ev.ApprovalRequested) -> None:
        assert self.chat.handle is not None
        drive(self.chat.handle, None, emit=self.emit, ask=self.ask, pending=pending)

    def emit(self, event: ev.RunEvent) -> None:
        """A run event from a worker: drawn by the screen (posted, never called across);
        streamed text goes through the delta buffer (batched to the UI's pace)."""
        if isinstance(event, ev.TextDelta):
            self.deltas.add(event)
            return
        self.post_message(RunEventMessage(event))
        if isinstance(event, ev.Compressed) and self.chat.info is not None:
            self.post_message(MarkersChanged(self.service.markers(self.chat.info.id)))

    def on_stream_wake(self, _: StreamWake) -> None:
        for delta in self.deltas.drain():
            self.on_run_event_message(RunEventMessage(delta))

    def on_run_event_message(self, message: RunEventMessage) -> None:
        super().on_run_event_message(message)
        event = message.event
        self.live.apply(event)
        if isinstance(event, (ev.RunStarted, ev.ApprovalDecided)):
            self.state = "running"
        elif isinstance(event, ev.UsageUpdated):
            self.status.used = event.input_tokens + event.output_tokens
            self.status.estimated = event.estimated
        elif isinstance(event, ev.Compressed):
            self.status.compressions += 1
            self.status.used = event.tokens_after
        elif isinstance(event, ev.Notice) and event.level == "info":
            self.notify(event.text, timeout=4)
        elif isinstance(event, ev.RunEnded) and event.status != "awaiting_approval":
            self.state = "idle"

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        report_worker_error(self, event)
        if event.worker.group == "run" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.live.flush()
            if self.state != "read-only":
                self.state = "idle"
            if not self.history.has_newer:
                self.history.load_newest()  # resync with the log (seqs, closed calls)
        elif event.worker.group == "open" and event.state == WorkerState.ERROR:
            self.status.note = "could not open the session"
            self.state = "read-only"

    # -- keys ----------------------------------------------------------------------------
    def action_stop(self) -> None:
        """``escape``: stops a run; while an approval waits it focuses the approval
        (where ``escape`` denies), so a stray key never decides."""
        if self.cancel_held_send():  # enter pressed while the session opened
            return
        if self.state == "awaiting approval" and self.focus_approval():
            return
        if self.state in ("running", "starting"):  # starting: applied once it runs
            self.chat.stop()
            self.state = "stopping"
        elif not double_escape(self):  # esc esc on an empty idle prompt: rewind
            self.query_one(PromptArea).focus()

    def action_page(self, direction: int) -> None:
        if direction < 0:
            self.history.scroll_page_up(animate=False)
        else:
            self.history.scroll_page_down(animate=False)

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
        self.going_back = True  # the app keeps the keys typed from now on for the browser
        self.post_message(BackToBrowser())

    def action_fork_selected(self) -> None:
        fork_selected(self)

    def action_settle(self, action: str) -> None:
        settle_selected(self, action)

    def action_rerun_call(self) -> None:
        rerun_selected(self)

    # -- leaving -------------------------------------------------------------------------
    async def shutdown(self, grace: float = 15.0) -> None:
        """Stop a run, wait for it, then close the session (session_end, lock)."""
        self.pending_leave()  # no queued input starts from now on
        if self.chat.handle is not None:
            self.chat.handle.stop()
        self.drop_question()
        mine = [w for w in self.app.workers if w.node is self and w.group in ("run", "open")]
        for worker in mine:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), grace)
        await asyncio.to_thread(self.chat.close)

    async def on_unmount(self) -> None:
        """The app is exiting without :meth:`shutdown` (e.g. ``app.exit()``): stop the
        run and close the session in a thread (the event loop only awaits it)."""
        await super().on_unmount()
        self.drop_question()
        await asyncio.to_thread(self.chat.close, wait=5.0)
