"""The chat history: a line-API scroll view over a bounded window of items.

Only a window of at most ``MAX_ITEMS`` items is kept; older pages are fetched by
keyset (``before=``) as the user scrolls up, newer ones (``after=``) as they
scroll back down, and the far end of the window is dropped. Pages are fetched
and rendered in thread workers; nothing here blocks the UI thread on I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Literal, Protocol

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker

from mttui.session.models import HistoryPage

from . import history_nav as nav
from .history_items import Item, Marker
from .history_render import Palette, edge_text, make_console, render_item
from .history_rewound import members
from .history_window import HistoryWindow, page_items
from .workers import report_worker_error

Fetch = Literal["replace", "older", "newer"]  # replace the window, or join a page at one end


class Pager(Protocol):
    """Fetches a keyset page of the session's messages (``SessionService.history``'s keys)."""

    def __call__(self, *, limit: int = ..., before: int | None = ..., around: int | None = ...,
                 after: int | None = ...) -> HistoryPage: ...


class HistoryView(HistoryWindow, ScrollView, can_focus=True):
    """Messages of one session, newest at the bottom."""

    DEFAULT_CSS = """
    HistoryView { background: $surface; scrollbar-size-vertical: 1; }
    HistoryView > .history--user { color: $text-success; text-style: bold; }
    HistoryView > .history--assistant { color: $text-primary; text-style: bold; }
    HistoryView > .history--tool { color: $text-accent; text-style: bold; }
    HistoryView > .history--ok { color: $text-success; }
    HistoryView > .history--error { color: $text-error; }
    HistoryView > .history--warning { color: $text-warning; }
    HistoryView > .history--dim { color: $text-muted; }
    HistoryView > .history--cursor { color: $accent; }
    HistoryView > .history--hit { color: $warning; background: $warning 15%; }
    """
    COMPONENT_CLASSES = {
        "history--user", "history--assistant", "history--tool", "history--ok",
        "history--error", "history--warning", "history--dim", "history--cursor", "history--hit",
    }
    BINDINGS = [
        Binding("up", "select(-1)", "Previous item", show=False, id="history.previous"),
        Binding("down", "select(1)", "Next item", show=False, id="history.next"),
        Binding("enter", "expand", "Expand", id="history.expand"),  # space types (chat_keys)
        Binding("home", "oldest", "Oldest", show=False, id="history.oldest"),
        Binding("end", "newest", "Newest", show=False, id="history.newest"),
    ]
    PAGE = 50
    GUTTER = 2

    class PageLoaded(Message, bubble=False):
        """A page fetched and rendered by the worker (``generation``: of the request)."""

        def __init__(self, how: Fetch, generation: int, page: HistoryPage, items: list[Item],
                     focus: int | None, top: bool) -> None:
            super().__init__()
            self.how, self.generation, self.page, self.items = how, generation, page, items
            self.focus, self.top = focus, top

    class PageFailed(Message, bubble=False):
        """The worker could not fetch the page of request ``generation``."""

        def __init__(self, generation: int) -> None:
            super().__init__()
            self.generation = generation

    def __init__(self, pager: Pager, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.pager = pager
        self.markers: list[Marker] = []
        self.reset_window()
        self._offsets: list[int] = []
        self.line_count = 0
        self.fetching = False
        self.selected: Item | None = None
        self.highlight_seq: int | None = None
        self._generation = 0
        self._palette = Palette()
        self._width = 0
        self._height = 0
        self._at_end = True  # the view showed the end at its last scroll (kept on a resize)
        self._line_console = make_console(80)
        self._paint_style: Style | None = None  # the widget's style during one paint

    # -- public API -----------------------------------------------------------
    @property
    def content_width(self) -> int:
        return max(self.scrollable_content_region.width - self.GUTTER - 1, 20)

    def set_markers(self, markers: list[Marker]) -> None:
        self.markers = list(markers)

    def load_newest(self) -> None:
        self._fetch("replace", limit=self.PAGE)

    def reload(self) -> None:
        """Load again after a change the index now shows, keeping the selected item
        selected (a second alt key acts on it, and is refused when it no longer applies)."""
        if self.selected is None:
            self.load_newest()
        else:
            seq = self.selected.seq
            self._fetch("replace", focus=seq, around=seq, limit=self.PAGE)

    def load_around(self, seq: int) -> None:
        self.highlight_seq = seq
        self._fetch("replace", focus=seq, around=seq, limit=self.PAGE)

    def load_oldest(self) -> None:
        self._fetch("replace", top=True, after=0, limit=self.PAGE)

    def add_item(self, item: Item) -> None:
        """Append a live item at the bottom (only when the newest page is shown)."""
        if self.has_newer:
            return
        follow = self.at_bottom
        self._render_item(item)
        self.items.append(item)
        self._reflow(follow=follow)

    def update_item(self, item: Item) -> None:
        """Re-render an item after its fields changed (streaming, status, result)."""
        if item not in self.items:
            return
        follow = self.at_bottom
        self._render_item(item)
        self._reflow(follow=follow)

    def remove_item(self, item: Item) -> None:
        if item in self.items:
            follow = self.at_bottom
            self.items.remove(item)
            self._reflow(follow=follow)

    def find(self, predicate: Callable[[Item], bool]) -> Item | None:
        return next((it for it in reversed(self.items) if predicate(it)), None)

    @property
    def at_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    def scroll_to_y(self, y: float) -> None:
        """Jump (no animation) to line ``y``."""
        self.scroll_to(y=y, animate=False, immediate=True, force=True)

    def rerender(self, item: Item) -> None:
        """Render ``item`` again (it was expanded or collapsed) and lay out the rest."""
        self._render_item(item)
        self._reflow(follow=False)

    # -- fetching -------------------------------------------------------------
    def _fetch(self, how: Fetch, *, focus: int | None = None, top: bool = False,
               limit: int = PAGE, before: int | None = None, around: int | None = None,
               after: int | None = None) -> None:
        if how == "replace":
            self._generation += 1
        elif self.fetching:
            return
        self.fetching = True
        self.refresh()
        generation, width, palette, markers = (self._generation, self.content_width,
                                               self._palette, self.markers)

        def work() -> None:
            try:
                page = self.pager(limit=limit, before=before, around=around, after=after)
            except Exception:
                self.post_message(self.PageFailed(generation))
                raise
            items = page_items(page, markers, width, palette)
            self.post_message(self.PageLoaded(how, generation, page, items, focus, top))

        self.run_worker(work, thread=True, group="history", name="loading history",
                        exit_on_error=False)

    def on_history_view_page_failed(self, message: PageFailed) -> None:
        if message.generation == self._generation:
            self.fetching = False
            self.refresh()

    def on_history_view_page_loaded(self, message: PageLoaded) -> None:
        self.fetching = False
        if message.generation != self._generation:
            return
        how, page, items, focus, top = (message.how, message.page, message.items, message.focus,
                                        message.top)
        if how == "replace":
            self.replace_items(page, items)
            self.selected = self.item_of(focus) if focus is not None else None
            hit = self.selected
            if hit is not None and hit.kind == "tool" and hit.result_seq == focus:
                hit.expanded = True  # the hit is in the tool's output: show it
                self._render_item(hit)
            group = (hit if hit.kind == "rewound" else hit.data.get("group")) if hit else None
            if isinstance(group, Item) and not group.expanded:
                group.expanded = True  # the hit is in a rewound branch: open it
                for member in [group, *members(self.items, group)]:
                    member.invalidate()
            self._reflow(follow=focus is None and not top)
            if focus is not None and self.selected is not None:
                self._center(self.selected)
            elif top:
                self.scroll_to_y(0)
            self.call_after_refresh(self._check_paging)
            return
        anchor = (self.items[0] if how == "older" else self.items[-1]) if self.items else None
        before = self.offset_of(anchor) if anchor is not None else 0
        if how == "older":
            self.prepend_items(page, items)
            moved = True
        else:
            moved = self.append_items(page, items) > 0
        self._reflow(follow=False)
        if moved and anchor is not None and anchor in self.items:
            delta = self.offset_of(anchor) - before
            self.scroll_to_y(self.scroll_y + delta)
        self.call_after_refresh(self._check_paging)

    def _check_paging(self) -> None:
        if self.fetching or not self.items and not self.has_more:
            return
        height = self.scrollable_content_region.height
        if self.has_more and self.scroll_y <= height:
            self._fetch("older", before=self.oldest_seq, limit=self.PAGE)
        elif self.has_newer and self.scroll_y >= self.max_scroll_y - height:
            self._fetch("newer", after=self.newest_seq, limit=self.PAGE)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._at_end = new_value >= self.max_scroll_y - 1
        if round(old_value) != round(new_value):
            self._check_paging()

    # -- layout ---------------------------------------------------------------
    def _render_item(self, item: Item) -> None:
        render_item(item, self.content_width, self._palette, self._line_console)

    def _reflow(self, *, follow: bool) -> None:
        width = self.content_width
        if width != self._line_console.width:
            self._line_console = make_console(width)
        offsets, y = [], 1  # line 0: the "start of session" / "loading" line
        for item in self.items:
            if item.lines is None or item.width != width:
                render_item(item, width, self._palette, self._line_console)
            offsets.append(y)
            y += len(item.lines or ())
        self._offsets = offsets
        self.line_count = y + (1 if self.has_newer else 0)
        self.virtual_size = Size(self.scrollable_content_region.width, self.line_count)
        self.refresh()
        if follow:
            self.scroll_to_y(self.max_scroll_y)

    def offset_of(self, item: Item) -> int:
        return self._offsets[self.items.index(item)]

    def _center(self, item: Item) -> None:
        top = self.offset_of(item)
        height = self.scrollable_content_region.height
        self.scroll_to_y(max(top - height // 3, 0))

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def watch_show_vertical_scrollbar(self) -> None:
        # The scrollbar takes a column without a Resize: lay out again at the new width
        # (else what is drawn depends on whether the first page came before or after it).
        self._fit()

    def _fit(self) -> None:
        if self.content_width == self._width:
            height = self.scrollable_content_region.height
            if height != self._height and self._at_end:  # a panel came or went below
                self.scroll_to_y(self.max_scroll_y)
            self._height = height
            return
        self._height = self.scrollable_content_region.height
        self._width = self.content_width
        follow = self._at_end  # as it was before the resize moved the bottom
        anchor = self.item_at(int(self.scroll_y))
        self._reflow(follow=follow)
        if anchor is not None and not follow:
            self.scroll_to_y(self.offset_of(anchor))

    def on_mount(self) -> None:
        self._resolve_palette()
        self.watch(self.app, "theme", lambda _: self._theme_changed(), init=False)

    def _theme_changed(self) -> None:
        self.notify_style_update()
        self._resolve_palette()
        for item in self.items:
            item.invalidate()
        self._reflow(follow=self.at_bottom)

    def _resolve_palette(self) -> None:
        self._palette = Palette.resolve(
            lambda name: self.get_component_rich_style(f"history--{name}", partial=True))

    def item_at(self, line: int) -> Item | None:
        if not self.items or line < 1:
            return self.items[0] if self.items else None
        i = bisect_right(self._offsets, line) - 1
        return self.items[max(min(i, len(self.items) - 1), 0)]

    # -- drawing --------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        # A paint asks for every line it shows: the widget's style (a walk up the DOM,
        # ~0.2 ms, a quarter of a streamed frame's cost) is taken once per paint.
        self._paint_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._paint_style = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style if self._paint_style is None else self._paint_style
        if line == 0:
            return self._edge_line("start", width, base)
        if self.has_newer and line == self.line_count - 1:
            return self._edge_line("end", width, base)
        if line >= self.line_count or not self.items:
            return Strip.blank(width, base)
        i = bisect_right(self._offsets, line) - 1
        item = self.items[i]
        row = line - self._offsets[i]
        lines = item.lines or []
        strip = lines[row] if row < len(lines) else Strip.blank(0)
        gutter = Strip.blank(self.GUTTER)
        if row < item.body:
            hl = self.highlight_seq
            if hl is not None and (item.seq == hl or item.result_seq == hl):
                hit = self.get_component_rich_style("history--hit")
                gutter = Strip([Segment("▌ ", hit)])
                strip = strip.apply_style(Style(bgcolor=hit.bgcolor))
            elif item is self.selected and self.has_focus:
                gutter = Strip([Segment("▌ ", self.get_component_rich_style("history--cursor"))])
        return Strip.join([gutter, strip]).apply_style(base).crop_extend(
            scroll_x, scroll_x + width, base)

    def _edge_line(self, which: str, width: int, base: Style) -> Strip:
        text = edge_text(which, fetching=self.fetching, has_more=self.has_more,
                         empty=not self.items)  # fmt: skip
        dim = self.get_component_rich_style("history--dim")
        return Strip([Segment("  " + text, dim)]).apply_style(base).crop_extend(0, width, base)

    # -- keys and mouse -------------------------------------------------------
    def select(self, item: Item) -> None:
        """Select ``item`` and scroll it into view."""
        nav.select(self, item)

    def action_select(self, step: int) -> None:
        nav.step(self, step)

    def action_expand(self) -> None:
        nav.toggle(self)

    def action_oldest(self) -> None:
        nav.oldest(self)

    def action_newest(self) -> None:
        nav.newest(self)

    def on_click(self, event: events.Click) -> None:
        nav.click(self, event.y)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
