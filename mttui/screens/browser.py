"""The session browser: the start screen (a paged session list and a preview)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker

from mttui.messages import (
    OpenSession,
    PreviewLoaded,
    ReplayKeys,
    SessionChangeDone,
    SessionsLoaded,
)
from mttui.session.errors import MttuiError
from mttui.session.lock import SessionLocked
from mttui.session.models import SearchHit, SearchScope, SessionInfo, SessionPage
from mttui.session.service import SessionService
from mttui.widgets.fit_footer import FitFooter
from mttui.widgets.preview import PreviewPane
from mttui.widgets.session_table import Clock, SessionTable
from mttui.widgets.text import literal, short_path
from mttui.widgets.workers import report_worker_error

if TYPE_CHECKING:
    from mttui.session.first_page import FirstPage



def import_deferred() -> None:
    """The preview's verdict, the search panel and the dialogs: imported once the first
    page is on the screen (its frame does not need them), before a key can ask for them
    (imported in a key's handler, the keys typed right after it were lost)."""
    from mttui.session.resume import verdict  # noqa: F401

    from . import dialogs, fork_parent, search  # noqa: F401

PAGE = 100
# Keys that act on rows: typed before a reloaded list has any, they wait for them.
ROW_KEYS = frozenset({"up", "down", "j", "k", "home", "end", "pageup", "pagedown", "enter"})
FIRST_PAGE_WAIT = 0.2  # seconds the mount waits for a first page read beforehand


class BrowserScreen(Screen[None]):
    """Sessions of the project (or of every project), newest first."""

    DEFAULT_CSS = """
    BrowserScreen #bar { height: 1; background: $panel; color: $text; padding: 0 1; }
    BrowserScreen #main { height: 1fr; }
    BrowserScreen SessionTable { width: 64%; }
    BrowserScreen PreviewPane { width: 36%; }
    BrowserScreen.-narrow SessionTable { width: 100%; }
    BrowserScreen.-narrow PreviewPane { display: none; }
    """
    # a narrow terminal (a split pane) gives the list all of it: a preview of a third
    # of 50 columns shows "id d7…"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (64, "-wide")]
    BINDINGS = [
        Binding("enter", "open", "Open", id="open", priority=True),
        Binding("n", "new_session", "New", id="new_session"),
        Binding("slash", "search", "Search", id="search", key_display="/"),
        Binding("r", "rename", "Rename", id="rename"),
        Binding("d", "delete", "Delete", id="delete"),
        Binding("a", "toggle_all", "All projects", id="all_projects"),
        Binding("q", "app.quit", "Quit", id="quit"),
    ]
    AUTO_FOCUS = "SessionTable"

    all_projects: reactive[bool] = reactive(False, init=False)  # the list's scope

    def __init__(self, service: SessionService, clock: Clock, *,
                 all_projects: bool = False, first_page: FirstPage | None = None) -> None:
        """``first_page``: the first page being read already (``FirstPage``), shown at
        mount so that the first frame has the sessions."""
        super().__init__()
        self.first_page = first_page
        self.service = service
        self.clock = clock
        self.set_reactive(BrowserScreen.all_projects, all_projects)
        self.next_cursor: str | None = None
        self.fetching = False
        self._serial = 0
        self._typed_ahead: list[events.Key] = []  # replayed after the next first page
        self._preview_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="bar")
        with Horizontal(id="main"):
            yield SessionTable(self.clock, id="sessions")
            yield PreviewPane(self.clock, id="preview")
        yield FitFooter()

    def hold_key(self, key: events.Key) -> bool:
        """Keep a row key typed while a reload has no rows to show yet (it moved nothing,
        or opened nothing, before): replayed once they are there. Quit and the rest pass."""
        if key.key in ROW_KEYS and self.fetching and not self.table.sessions:
            self._typed_ahead.append(key)
            return True
        return False

    @property
    def table(self) -> SessionTable:
        return self.query_one(SessionTable)

    def on_mount(self) -> None:
        self._bar()
        first, self.first_page = self.first_page, None
        page = None
        if first is not None and (first.all_projects, first.limit) == (self.all_projects, PAGE):
            page = first.take(FIRST_PAGE_WAIT)
        if page is None or not page.sessions:
            self.reload()
            return
        # Shown in the first frame; the catch-up starts once that frame is drawn (not
        # competing with its drawing for the interpreter).
        self.next_cursor = None
        self.fetching = True
        self._serial += 1
        self.on_sessions_loaded(SessionsLoaded(page, reset=True, all_projects=self.all_projects,
                                               serial=self._serial, final=False))
        self.call_after_refresh(self._schedule_preview)  # the rows are there once laid out
        self.call_after_refresh(self._fetch, None, True, self.all_projects, self._serial, page)

    def _bar(self) -> None:
        scope = "all projects" if self.all_projects else short_path(self.service.project)
        count = len(self.table.sessions)
        more = "+" if self.table.more else ""
        bar = Text.assemble(("mttui", "bold"), "  sessions · ", (scope, "bold"),
                            (f"   {count}{more} shown", "dim"))
        self.query_one("#bar", Static).update(bar)

    # -- loading --------------------------------------------------------------
    def reload(self, then: Sequence[events.Key] = ()) -> None:
        """List the sessions again; ``then``: keys typed meanwhile, replayed once the
        first page is shown (so they move the cursor in the new order, not the old)."""
        self.next_cursor = None
        self._typed_ahead = list(then)
        self._load(reset=True)

    def _load(self, *, reset: bool) -> None:
        if self.fetching and not reset:
            return
        self.fetching = True
        if reset:
            self._serial += 1
        self._fetch(None if reset else self.next_cursor, reset, self.all_projects, self._serial)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if report_worker_error(self, event) and event.worker.group == "sessions":
            self.fetching = False
            self._replay_typed()  # not held for rows that are not coming

    @work(thread=True, group="sessions", exit_on_error=False, name="listing sessions")
    def _fetch(self, cursor: str | None, reset: bool, all_projects: bool, serial: int,
               first: SessionPage | None = None) -> None:
        service = self.service
        if reset:
            # The first page from the index as it is, at once (``first``: shown
            # already); then the catch-up (a stat of every log) and the page again if
            # it changed.
            if first is None:
                first = service.list_sessions(all_projects=all_projects, limit=PAGE,
                                              fresh=False)
                if first.sessions:  # an empty index may only be behind: no "no sessions"
                    self.post_message(SessionsLoaded(first, reset=True, serial=serial,
                                                     all_projects=all_projects, final=False))
            service.catch_up(all_projects=all_projects)
            page = service.list_sessions(all_projects=all_projects, limit=PAGE)
            if first.sessions and page == first:
                self.post_message(SessionsLoaded(page, reset=False, all_projects=all_projects,
                                                 serial=serial))  # no change: done
                return
        else:
            page = service.list_sessions(all_projects=all_projects, limit=PAGE, cursor=cursor)
        self.post_message(SessionsLoaded(page, reset=reset, all_projects=all_projects,
                                         serial=serial))

    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        self.fetching = not message.final  # no paging until the catch-up is done
        if message.serial != self._serial:
            return  # a newer reload is on its way
        self.next_cursor = message.page.next_cursor
        table = self.table
        table.set_scope(message.all_projects)
        self.query_one(PreviewPane).show_project = message.all_projects
        table.set_sessions(message.page.sessions, reset=message.reset,
                           more=message.page.next_cursor is not None)
        self._bar()
        if not table.sessions:
            where = "anywhere" if self.all_projects else "in this project"
            self.query_one(PreviewPane).show_empty(
                f"No sessions {where} yet.\n\nPress n to start one"
                + ("." if self.all_projects else ", or a to see every project."))
        elif message.reset:
            self._schedule_preview()
        if message.reset and not message.final and not table.sessions:
            self.call_after_refresh(import_deferred)  # else once the rows are drawn
        self._replay_typed()

    def _replay_typed(self) -> None:
        """The keys held for the rows, sent again (as the app's keys), in order."""
        typed, self._typed_ahead = self._typed_ahead, []
        if typed:
            self.post_message(ReplayKeys([(k.key, k.character) for k in typed]))

    @on(SessionTable.RowsDrawn)
    def _rows_drawn(self) -> None:
        import_deferred()

    @on(SessionTable.NeedMore)
    def _more(self) -> None:
        if self.next_cursor is not None:
            self._load(reset=False)

    # -- preview --------------------------------------------------------------
    @on(SessionTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._schedule_preview()

    def _schedule_preview(self) -> None:
        info = self.table.current
        if info is None:
            return
        pane = self.query_one(PreviewPane)
        if pane.session_id != info.id:
            pane.show_info(info)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(0.12, lambda: self._preview(info))

    @work(thread=True, group="preview", exclusive=True, exit_on_error=False, name="preview")
    def _preview(self, info: SessionInfo) -> None:
        from mttui.session.resume.verdict import preview_verdict

        from .fork_parent import with_parent

        page = self.service.history(info.id, limit=6)
        verdict = preview_verdict(self.service, info)
        info = with_parent(self.service, info)  # a fork: its parent's title
        self.post_message(PreviewLoaded(info, page, verdict))

    def on_preview_loaded(self, message: PreviewLoaded) -> None:
        current = self.table.current
        if current is None or current.id != message.info.id:
            return  # stale: the cursor moved on
        self.query_one(PreviewPane).show(message.info, message.page.messages, message.verdict)

    # -- actions --------------------------------------------------------------
    @on(SessionTable.RowSelected)
    def _selected(self, event: SessionTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        # Enter is a priority key: it runs before keys typed just ahead of it (``j j
        # enter`` at once) have gone their way: to the list, up through its containers
        # and the screen, back to the app, whose bindings move the cursor. Follow them
        # through the same queues, behind them, then open the row the cursor is on.
        behind_keys(list(self.table.ancestors_with_self), self._open_current)

    def key_ctrl_j(self) -> None:
        """Enter typed before the app took the terminal (``mttui`` then ``j j enter`` at
        once) arrives as ctrl+j: the terminal had turned its CR into a LF."""
        self.action_open()

    def _open_current(self) -> None:
        info = self.table.current
        if info is not None:
            self.post_message(OpenSession(info.id))

    def action_new_session(self) -> None:
        self.post_message(OpenSession(None))

    def action_search(self) -> None:
        from .search import SearchScreen

        def done(hit: SearchHit | None) -> None:
            if hit is not None:
                self.post_message(OpenSession(hit.session_id, around=hit.seq))

        scope: SearchScope = "all" if self.all_projects else "project"
        self.app.push_screen(SearchScreen(self.service, self.clock, scope=scope), done)

    def action_toggle_all(self) -> None:
        self.all_projects = not self.all_projects

    def watch_all_projects(self) -> None:
        self.table.set_sessions([], reset=True, more=False)
        self._bar()
        self.reload()

    def action_rename(self) -> None:
        from .dialogs import RenameScreen

        info = self.table.current
        if info is None:
            return

        def done(title: str | None) -> None:
            if title and title != info.title:
                self._change("rename", info.id, lambda: self.service.rename(info.id, title))

        self.app.push_screen(RenameScreen(info.title or ""), done)

    def action_delete(self) -> None:
        from .dialogs import ConfirmScreen

        info = self.table.current
        if info is None:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._change("delete", info.id, lambda: self.service.delete(info.id))

        question = (f"Delete “{info.title or '(untitled)'}” ({info.message_count:,} messages)?"
                    "\nIts log and checkpoints are removed. This cannot be undone.")
        self.app.push_screen(ConfirmScreen("Delete session", question), done)

    @work(thread=True, group="change", exit_on_error=False, name="changing the session")
    def _change(self, what: str, session_id: str, change: Callable[[], None]) -> None:
        try:
            change()
        except (MttuiError, SessionLocked) as exc:  # locked: another process writes it
            self.post_message(SessionChangeDone(what, session_id, error=str(exc)))
            return
        self.post_message(SessionChangeDone(what, session_id))

    def on_session_change_done(self, message: SessionChangeDone) -> None:
        if message.error is not None:
            self.notify(literal(message.error), title=f"Cannot {message.what}", severity="error")
            return
        done = "Renamed" if message.what == "rename" else "Deleted"
        self.notify(f"{done} session {message.session_id}", timeout=3)
        if message.what == "delete":  # the cursor goes to the neighbour, not the top
            self.table.fallback = self.table.neighbour_of(message.session_id)
        self.reload()


def behind_keys(pumps: list[Any], then: Callable[[], None]) -> None:
    """Run ``then`` once every message now queued on ``pumps`` (in order) is handled."""
    if not pumps:
        then()
        return
    pumps[0].call_later(behind_keys, pumps[1:], then)
