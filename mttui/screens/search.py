"""The search panel: results as you type, in a worker; stale results are dropped."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from mttui.messages import SearchDone, SearchIndexing
from mttui.session.models import SNIPPET_END, SNIPPET_START, SearchHit, SearchScope
from mttui.session.service import SessionService
from mttui.session.times import relative_time
from mttui.widgets.session_table import Clock
from mttui.widgets.text import literal, one_line
from mttui.widgets.typed_input import TypedInput
from mttui.widgets.workers import report_worker_error

SCOPE_LABEL = {"session": "this session", "project": "this project", "all": "everything"}
def title_hit(hit: SearchHit) -> bool:
    """A hit of the session's title (its snippet is the title), not of a message."""
    title = " ".join((hit.session_title or "").split())
    return bool(title) and " ".join(snippet_text(hit.snippet).plain.split()) == title


ROLE_LABEL = {"user": "You", "assistant": "Assistant", "tool": "Tool", "system": "System"}
DEBOUNCE = 0.2
LIMIT = 50


def snippet_text(snippet: str) -> Text:
    """A snippet with the parts between ⟦ and ⟧ highlighted (everything else literal)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    rest = " ".join(snippet.split())
    while rest:
        start = rest.find(SNIPPET_START)
        if start < 0:
            out.append(literal(rest))
            break
        out.append(literal(rest[:start]))
        end = rest.find(SNIPPET_END, start + 1)
        end = len(rest) if end < 0 else end
        out.append(literal(rest[start + 1 : end]), style="bold black on yellow")
        rest = rest[end + 1 :]
    return out


class SearchScreen(ModalScreen[SearchHit | None]):
    """Returns the chosen hit (the caller opens the session around it), or ``None``."""

    DEFAULT_CSS = """
    SearchScreen { align: center top; background: $background 60%; }
    SearchScreen > Vertical {
        width: 92%; max-width: 120; height: 80%; margin-top: 2; padding: 0 1;
        background: $panel; border: round $primary; border-title-color: $text;
    }
    SearchScreen Input { margin: 1 0 0 0; }
    SearchScreen #scope { height: 1; margin: 0 1; }
    SearchScreen #count { height: 1; margin: 0 1; color: $text-muted; }
    SearchScreen OptionList { height: 1fr; border: none; background: $panel; padding: 0; }
    SearchScreen OptionList > .option-list--option-highlighted { background: $primary 35%; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="search.close"),
        Binding("enter", "choose", "Open at hit", id="search.open", priority=True),
        Binding("tab", "scope", "Scope", id="search.scope", priority=True),
        Binding("down", "move(1)", "Next", show=False, id="search.next"),
        Binding("up", "move(-1)", "Previous", show=False, id="search.previous"),
    ]

    scope: reactive[SearchScope] = reactive[SearchScope]("project", init=False)

    def __init__(self, service: SessionService, clock: Clock, *,
                 scope: SearchScope = "project", session_id: str | None = None,
                 query: str = "") -> None:
        super().__init__()
        self.service = service
        self.clock = clock
        self.session_id = session_id
        self.set_reactive(SearchScreen.scope,
                          scope if (scope != "session" or session_id) else "project")
        self.initial = query
        self.hits: list[SearchHit] = []
        self._serial = 0
        self._timer: Timer | None = None
        self._indexing = ""  # the note of a search writing owed FTS rows, until one ends

    @property
    def scopes(self) -> list[SearchScope]:
        return ["session", "project", "all"] if self.session_id else ["project", "all"]

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Search"
            yield TypedInput(self.initial, placeholder="search messages…", id="query")
            yield Static(id="scope")
            yield Static(id="count")
            yield OptionList(id="hits")
        yield Footer()

    def on_mount(self) -> None:
        self._show_scope()
        self.query_one(Input).focus()
        self._show_count("type to search")
        if self.initial:
            self._run_search()

    def _show_scope(self) -> None:
        line = Text("scope  ", style="dim")
        for scope in self.scopes:
            on_ = scope == self.scope
            line.append(("● " if on_ else "○ ") + SCOPE_LABEL[scope] + "   ",
                        style="bold" if on_ else "dim")
        line.append("(tab)", style="dim")
        self.query_one("#scope", Static).update(line)

    def _show_count(self, text: str) -> None:
        self.query_one("#count", Static).update(text)

    # -- searching ------------------------------------------------------------
    @on(Input.Changed)
    def _changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self._run_search)

    def _run_search(self) -> None:
        query = self.query_one(Input).value
        self._serial += 1
        if not query.strip():
            self.hits = []
            self.query_one(OptionList).clear_options()
            self._show_count("type to search")
            return
        self._show_count(self._indexing or "searching…")  # a newer query waits for it too
        self._search(self._serial, query, self.scope)

    @work(thread=True, group="search", exit_on_error=False, name="search")
    def _search(self, serial: int, query: str, scope: SearchScope) -> None:
        sid = self.session_id if scope == "session" else None

        def indexing(owed: int) -> None:  # told before the owed FTS rows are written
            self.post_message(SearchIndexing(serial, owed))

        hits = self.service.search(query, scope=scope, session_id=sid, limit=LIMIT,
                                   indexing=indexing)  # fmt: skip
        self.post_message(SearchDone(serial, query, hits))

    def on_search_indexing(self, message: SearchIndexing) -> None:
        self._indexing = (f"searching… first indexing {message.owed:,} messages for search "
                          "(once: after an upgrade or a fork)")
        if message.serial == self._serial:
            self._show_count(self._indexing)

    def on_search_done(self, message: SearchDone) -> None:
        self._indexing = ""  # whichever search wrote them is done
        if message.serial != self._serial:
            return  # the query changed meanwhile
        self.hits = message.hits
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._hit_text(h), id=str(i))
                             for i, h in enumerate(message.hits)])
        if message.hits:
            options.highlighted = 0
        n = len(message.hits)
        more = "+" if n >= LIMIT else ""
        self._show_count(f"{n}{more} hit{'s' if n != 1 else ''} · enter opens the session there"
                         if n else "no hits")

    def _hit_text(self, hit: SearchHit) -> Text:
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(one_line(hit.session_title or "(untitled)", 60), style="bold")
        if title_hit(hit):  # the title matched, not a message
            head.append("  ·  title", style="cyan")
        else:
            head.append(f"  ·  {ROLE_LABEL.get(hit.role, hit.role)}", style="cyan")
            if hit.created_at:
                head.append(f"  ·  {relative_time(hit.created_at, self.clock())}", style="dim")
            head.append(f"  ·  #{hit.seq}", style="dim")
        body = Text("  ")
        body.append_text(snippet_text(hit.snippet))
        return Text("\n").join([head, body])

    # -- keys -----------------------------------------------------------------
    def action_scope(self) -> None:
        scopes = self.scopes
        self.scope = scopes[(scopes.index(self.scope) + 1) % len(scopes)]

    def watch_scope(self) -> None:
        self._show_scope()
        self._run_search()

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not options.option_count:
            return
        current = options.highlighted if options.highlighted is not None else -step
        options.highlighted = max(0, min(options.option_count - 1, current + step))

    def action_choose(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is not None and 0 <= index < len(self.hits):
            self.dismiss(self.hits[index])

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.hits[event.option_index])

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if report_worker_error(self, event):
            self._indexing = ""
            self._show_count("search failed")

    def action_close(self) -> None:
        self.dismiss(None)
