"""The Textual application: the session browser and the chat of a session.

The CLI builds the services and passes them in (nothing is done at import time)::

    MttuiApp(service, settings, open_session=session_id_or_None, open_browser=True).run()
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from importlib import import_module
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker

from mttui.config import Settings
from mttui.messages import BackToBrowser, OpenSession, ReplayKeys, SessionsLoaded
from mttui.screens.browser import BrowserScreen
from mttui.session import gc_pause
from mttui.session.service import SessionService
from mttui.widgets.workers import report_worker_error

if TYPE_CHECKING:
    from textual.driver import Driver

    from mttui.core.chat_session import ChatSession
    from mttui.core.handle import RunnerFactory
    from mttui.session.first_page import FirstPage

Clock = Callable[[], datetime]

__all__ = ["MttuiApp"]
QUIT_AGAIN_WITHIN = 2.0  # seconds: a second ctrl+c on an empty prompt quits
UI_SWITCH_INTERVAL = 0.001  # seconds a thread keeps the GIL while others wait for it


def utc_now() -> datetime:
    return datetime.now(UTC)


class MttuiApp(App[None]):
    """``service``: a ``SessionService``; ``settings``: ``mttui.config.Settings``;
    ``runtime_factory``: builds the runner of an open session (default from settings).

    ``open_session``: a session id to open in the chat at start (``--resume S``,
    ``--continue``); ``open_browser``: start on the session browser (otherwise, without
    ``open_session``, a new chat). The browser is always underneath: ``ctrl+o`` returns
    to it. ``clock`` is injectable for deterministic relative times in tests.
    ``first_page``: the browser's first page, its read started before the app was
    imported (``mttui.session.first_page.FirstPage``), so the first frame shows it.
    """

    TITLE = "mttui"
    CSS_PATH = str(Path(__file__).with_name("theme.tcss"))  # absolute: subclasses too
    BINDINGS = [
        Binding("f1,question_mark", "help", "Help", id="help", key_display="f1"),
        Binding("ctrl+q", "quit", "Quit", id="quit_app", show=False, priority=True),
        Binding("ctrl+c", "quit_twice", "Quit (press twice)", id="quit_twice", show=False),
    ]

    def __init__(self, service: SessionService, settings: Settings,
                 runtime_factory: RunnerFactory | None = None, *,
                 open_session: str | None = None, open_browser: bool = True,
                 around: int | None = None, all_projects: bool = False,
                 clock: Clock | None = None, warm_up: bool = True,
                 first_page: FirstPage | None = None) -> None:
        super().__init__()
        self.first_page = first_page  # the browser's first page, read beforehand
        self.service = service
        self.settings = settings
        self._runtime_factory = runtime_factory
        self.open_session = open_session
        self.open_browser = open_browser
        self.around = around
        self.all_projects = all_projects
        self.clock: Clock = clock or utc_now
        self.warm_up = warm_up
        self._warmed = False
        self._signalled = False
        self._old_handlers: dict[int, Any] = {}
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._typed_ahead: list[events.Key] = []  # keys typed while a chat closes
        self._held: list[events.Key] = []  # keys typed while a screen opens (no focus yet)
        self._settled: Screen[Any] | None = None  # the screen whose focus was awaited
        self._sent_to: dict[int, Screen[Any]] = {}  # a key sent on: to which screen
        self._hold_rounds = 0
        self._ctrl_c = -QUIT_AGAIN_WITHIN  # when ctrl+c last asked to be pressed again
        self.last_session: str | None = None  # the chat open at quit (printed on exit)
        self._switch_interval = sys.getswitchinterval()  # the process's, restored at exit
        self.keymap = dict(settings.keys)  # binding id -> keys, from [keys] of the config
        if self.keymap:
            self.set_keymap(self.keymap)

    def get_default_screen(self) -> Screen[Any]:
        """The browser, at the bottom. Pushed from ``on_mount`` instead, it drew its
        first frame inside the app's start-up batch, where Textual throws frames away."""
        first, self.first_page = self.first_page, None
        return BrowserScreen(self.service, self.clock, all_projects=self.all_projects,
                             first_page=first)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, reading pasted text as one paste (``terminal_driver``)."""
        from .terminal_driver import driver_for

        return driver_for(super().get_driver_class())

    @property
    def runtime_factory(self) -> RunnerFactory:
        """The runner factory given, else the LangGraph one (its module is imported
        only when a chat opens, not before the first frame)."""
        if self._runtime_factory is None:
            from mttui.core.handle import langgraph_runner

            self._runtime_factory = langgraph_runner
        return self._runtime_factory

    # -- start ----------------------------------------------------------------
    def on_mount(self) -> None:
        self._catch_signals()
        # Other threads (the model client's, parsing a fast stream) keep the GIL 5 ms at a
        # time by default; at 1 ms a key waits less behind them (B13).
        sys.setswitchinterval(UI_SWITCH_INTERVAL)
        if self.open_session:
            self._chat(self.open_session, around=self.around)
        elif not self.open_browser:
            self._chat(None)

    def on_ready(self) -> None:
        self.call_after_refresh(gc_pause.resume)  # the CLI paused collections (gc_pause)
        # Warm up once the first screen has its data (so that the imports do not compete
        # for the GIL with it), or after a second at the latest.
        if self.warm_up:
            self.set_timer(1.0, self._start_warm_up)

    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        if message.final:  # after the browser's catch-up, not competing with it
            self._start_warm_up()

    def _start_warm_up(self) -> None:
        if not self.warm_up or self._warmed:
            return
        self._warmed = True
        self.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False,
                        name="loading the agent runtime")

    def _warm_up(self) -> None:
        """Import the chat, LangGraph & co. in a thread, for good: the first send is quick."""
        for name in ["mttui.screens.chat", "mttui.graph.runner", "mttui.graph.agent",
                     "mttui.graph.checkpoints", "mttui.graph.message_saver",
                     "mttui.graph.run_loop", "mttui.graph.prompt", "mttui.graph.resume.apply"]:
            import_module(name)
        if self.settings.provider != "offline":
            import_module("mttui.graph.models.openai").warm_up()
        gc_pause.keep()  # never walked by a full collection again

    # -- screens --------------------------------------------------------------
    def _chat(self, session_id: str | None, *, around: int | None = None) -> None:
        from mttui.screens.chat import ChatScreen

        self.push_screen(ChatScreen(self.service, self.settings, self.runtime_factory,
                                    self.clock, session_id=session_id, around=around))

    async def on_open_session(self, message: OpenSession) -> None:
        from mttui.screens.chat import ChatScreen

        screen = self.screen
        if isinstance(screen, ChatScreen):
            await screen.shutdown()
            await self.pop_screen()
        self._chat(message.session_id, around=message.around)

    async def on_back_to_browser(self, message: BackToBrowser) -> None:
        from mttui.screens.chat import ChatScreen

        screen = self.screen
        typed: list[events.Key] = []
        try:
            if isinstance(screen, ChatScreen):
                await screen.shutdown()
                await self.pop_screen()
            if isinstance(self.screen, BrowserScreen):
                typed, self._typed_ahead = self._typed_ahead, []
                self.screen.reload(then=typed)  # the keys act on the reloaded rows
        finally:
            typed, self._typed_ahead = self._typed_ahead, []
            for key in typed:  # in order, after the screen change
                self.post_message(events.Key(key.key, key.character))

    def on_replay_keys(self, message: ReplayKeys) -> None:
        for key, character in message.keys:  # made here: they travel as the app's keys
            self.post_message(events.Key(key, character))

    async def on_event(self, event: events.Event) -> None:
        """Keys typed after ``ctrl+o`` while the chat closes are kept for the browser
        (arrows pressed at once would otherwise reach the closing chat's prompt)."""
        if isinstance(event, events.Key) and not event.is_forwarded \
                and getattr(self.screen, "going_back", False):
            self._typed_ahead.append(event)
            return
        if isinstance(event, events.Key) and not event.is_forwarded \
                and isinstance(self.screen, BrowserScreen) and self.screen.hold_key(event):
            return  # a row key typed before the reloaded rows: replayed once they are there
        if isinstance(event, events.Key):
            if not event.is_forwarded:
                if self._hold(event):
                    return
                self._sent_to[id(event)] = self.screen
                if len(self._sent_to) > 64:  # keys a widget used never come back
                    del self._sent_to[next(iter(self._sent_to))]
            elif self._covered(self._sent_to.pop(id(event), self.screen)):
                # Back unused from a screen that another key covered (``/`` opened the
                # search panel while the keys after it were on their way): for the new one.
                self.post_message(events.Key(event.key, event.character))
                return
        await super().on_event(event)

    def _covered(self, screen: Screen[Any]) -> bool:
        """Whether ``screen`` is still open but another screen was pushed over it."""
        return screen is not self.screen and screen in self.screen_stack

    HOLD_ROUNDS = 5  # refreshes a key waits at most for an opening screen's focus

    def _hold(self, key: events.Key) -> bool:
        """Keep a key typed while a screen opens (pushed, its field not focused yet:
        Textual drops a key sent to a screen with no focus); replayed once it has one."""
        screen = self.screen
        if not self._held and (screen.focused is not None or screen is self._settled):
            return False
        self._held.append(key)
        if len(self._held) == 1:
            self._hold_rounds = 0
            self.call_after_refresh(self._release_held)
        return True

    def _release_held(self) -> None:
        self._hold_rounds += 1
        if self.screen.focused is None and self._hold_rounds < self.HOLD_ROUNDS:
            self.call_after_refresh(self._release_held)
            return
        self._settled = self.screen
        held, self._held = self._held, []
        for key in held:  # in order; made here: they travel as the app's keys
            self.post_message(events.Key(key.key, key.character))

    # -- signals --------------------------------------------------------------
    QUIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
    HANGUP_WAIT = 4.0  # SIGHUP: how long a stopped run gets to record its end (a tool
    #                    is killed 2 s after the stop) before its session is closed
    HANGUP_EXIT = 1.0  # SIGHUP: how long the loop then gets to restore the terminal
    QUIT_GRACE = 10.0  # how long the event loop gets to quit before the sessions are
    #                    closed from the signal's thread (a terminal that is gone can
    #                    block the app's output, and with it the event loop, for good)

    def _catch_signals(self) -> None:
        """SIGHUP (the terminal was closed) and SIGTERM (``kill PID``) quit like ctrl+q:
        the run stops, a running tool's process group is killed and its outcome written,
        the session is closed and the terminal restored (SIGHUP: the terminal is most
        likely gone, so the signal's thread closes the sessions and ends soon after).
        (A headless app, e.g. under test, leaves the process's handlers alone.)

        Python handlers, not the event loop's: they run even while the loop is blocked
        writing to a terminal that no longer reads."""
        if self.is_headless:
            return
        self._event_loop = asyncio.get_running_loop()
        for signum in self.QUIT_SIGNALS:
            with contextlib.suppress(ValueError):  # not the main thread: no handlers
                self._old_handlers[signum] = signal.signal(signum, self._quit_on_signal)

    def _quit_on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._signalled:
            return  # already quitting: the run is being stopped and the session closed
        self._signalled = True
        threading.Thread(target=self._quit_after_signal, args=(signum,), name="mttui-quit",
                         daemon=True).start()

    def _open_chats(self) -> list[ChatSession]:
        from mttui.screens.chat import ChatScreen

        return [s.chat for s in list(self.screen_stack) if isinstance(s, ChatScreen)]

    def _quit_after_signal(self, signum: int) -> None:
        """Stop the runs at once, then quit as ctrl+q does; if the event loop cannot
        (it is stuck on a dead terminal), close the sessions from here and end.

        SIGHUP: the terminal is most likely gone, so the loop is not waited for: the
        sessions are closed from here first (each run records its end), then the loop
        gets a moment to restore a terminal that is still there."""
        for chat in self._open_chats():
            if chat.handle is not None:
                chat.handle.stop()
        hangup = signum == signal.SIGHUP
        if hangup:
            for chat in self._open_chats():
                chat.close(wait=self.HANGUP_WAIT)
        if self._event_loop is not None:  # without waiting: the loop may be stuck
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._event_loop.call_soon_threadsafe(self.call_later, self.action_quit)
        deadline = time.monotonic() + self.QUIT_GRACE
        while time.monotonic() < deadline and any(c.handle for c in self._open_chats()):
            time.sleep(0.05)
        for chat in self._open_chats():
            chat.close(wait=5.0)  # a no-op for a session the app closed already
        # the app restores the terminal and exits on its own if it can
        time.sleep(self.HANGUP_EXIT if hangup else 5.0)
        os._exit(128 + signum)

    async def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)
        for signum, old in self._old_handlers.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signum, old)

    async def action_quit(self) -> None:
        from mttui.screens.chat import ChatScreen

        for screen in reversed(self.screen_stack):
            if isinstance(screen, ChatScreen):
                self.last_session = self.last_session or screen.chat.session_id
                await screen.shutdown()
        self.exit()

    async def action_quit_twice(self) -> None:
        """``ctrl+c`` with nothing to clear: asks to press it again, then quits."""
        now = time.monotonic()
        if now - self._ctrl_c < QUIT_AGAIN_WITHIN:
            await self.action_quit()
            return
        self._ctrl_c = now
        self.notify("Press ctrl+c again to quit", timeout=QUIT_AGAIN_WITHIN)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)

    # -- help and commands ----------------------------------------------------
    def help_sections(self) -> list[tuple[str, list[BindingType]]]:
        from mttui.screens.approval import ApprovalPanel
        from mttui.screens.chat import ChatScreen
        from mttui.screens.chat_keys import KeysChat
        from mttui.screens.dialogs import ConfirmScreen, RenameScreen
        from mttui.screens.help import HelpScreen
        from mttui.screens.search import SearchScreen
        from mttui.widgets.history import HistoryView
        from mttui.widgets.pending_lane import PendingLane, pending_keys
        from mttui.widgets.prompt import PromptArea

        return [
            ("Everywhere", list(self.BINDINGS)),
            ("Session browser", list(BrowserScreen.BINDINGS)),
            ("Chat", list(ChatScreen.BINDINGS) + list(PromptArea.BINDINGS) + pending_keys()
             + list(KeysChat.BINDINGS)),
            ("Chat history (when focused: tab)", list(HistoryView.BINDINGS)),
            ("Pending lane (when focused: tab)", [b for b in PendingLane.BINDINGS
                                                  if isinstance(b, Binding) and b.id]),
            ("Search panel", list(SearchScreen.BINDINGS)),
            ("Approval", list(ApprovalPanel.BINDINGS)),
            ("Dialogs", list(RenameScreen.BINDINGS) + list(ConfirmScreen.BINDINGS)),
            ("Help", list(HelpScreen.BINDINGS)),
        ]

    def action_help(self) -> None:
        from mttui.screens.help import HelpScreen, offline_help, slash_help

        if any(isinstance(s, HelpScreen) for s in self.screen_stack):
            return
        self.push_screen(HelpScreen(self.help_sections(), offline=offline_help(),
                                    keymap=self.keymap, commands=slash_help()))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every binding active on the screen is also a command of the palette."""
        builtin = list(super().get_system_commands(screen))
        yield from builtin
        seen: set[str] = set()
        quit_listed = any(c.title == "Quit" for c in builtin)
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if binding.action in ("quit", "app.quit") and quit_listed:
                continue  # the palette lists "Quit" once
            if (not binding.id or not binding.description or binding.action in seen
                    or not active.enabled):
                continue  # widgets' own unnamed keys (cursor moves…) stay out of the list
            seen.add(binding.action)
            display = self.get_key_display(binding) if binding.key == key else key
            yield SystemCommand(binding.description, f"{display} · {binding.id or ''}",
                                partial(self.run_action, binding.action, active.node))
