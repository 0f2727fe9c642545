"""The chat history: a line-API scroll view over a bounded window of items.

Only a window of at most ``MAX_ITEMS`` items is kept; older pages are fetched by
keyset (``before=``) as the user scrolls up, newer ones (``after=``) as they
scroll back down, and the far end of the window is dropped. Pages are fetched
and rendered in thread workers; nothing here blocks the UI thread on I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker

from mttui.session.models import HistoryPage

from .history_items import MARKER_KINDS, Item, Marker, items_from_rows, join_results, markers_in
from .history_render import Palette, make_console, render_item
from .workers import report_worker_error

Pager = Callable[..., HistoryPage]


class HistoryView(ScrollView, can_focus=True):
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
        Binding("enter,space", "expand", "Expand", id="history.expand"),
        Binding("home", "oldest", "Oldest", show=False, id="history.oldest"),
        Binding("end", "newest", "Newest", show=False, id="history.newest"),
    ]
    PAGE = 50
    MAX_ITEMS = 300
    GUTTER = 2

    def __init__(self, pager: Pager, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.pager = pager
        self.markers: list[Marker] = []
        self.items: list[Item] = []
        self._offsets: list[int] = []
        self._total = 0
        self.oldest_seq = 0
        self.newest_seq = 0
        self.has_more = False
        self.has_newer = False
        self.fetching = False
        self.selected: Item | None = None
        self.highlight_seq: int | None = None
        self._generation = 0
        self._palette = Palette()
        self._width = 0
        self._line_console = make_console(80)

    # -- public API -----------------------------------------------------------
    @property
    def content_width(self) -> int:
        return max(self.scrollable_content_region.width - self.GUTTER - 1, 20)

    def set_markers(self, markers: list[Marker]) -> None:
        self.markers = list(markers)

    def load_newest(self) -> None:
        self._fetch("replace", limit=self.PAGE)

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

    def select(self, item: Item) -> None:
        """Select ``item`` and scroll it into view."""
        if item in self.items:
            self.selected = item
            self._reveal(item)
            self.refresh()

    def find(self, predicate: Callable[[Item], bool]) -> Item | None:
        return next((it for it in reversed(self.items) if predicate(it)), None)

    @property
    def at_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    # -- fetching -------------------------------------------------------------
    def _fetch(self, how: str, *, focus: int | None = None, top: bool = False,
               **query: Any) -> None:
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
                page = self.pager(**query)
            except Exception:
                self.app.call_from_thread(self._failed, generation)
                raise
            rows = page.messages
            lo = rows[0].seq if rows else 1
            hi = rows[-1].seq if rows else 0
            mine = markers_in(markers, lo, hi, first=not page.has_more,
                              last=not page.has_newer)
            items = items_from_rows(rows, mine)
            console = make_console(width)
            for item in items:
                render_item(item, width, palette, console)
            self.app.call_from_thread(self._apply, how, generation, page, items, focus, top)

        self.run_worker(work, thread=True, group="history", name="loading history",
                        exit_on_error=False)

    def _failed(self, generation: int) -> None:
        if generation == self._generation:
            self.fetching = False
            self.refresh()

    def _apply(self, how: str, generation: int, page: HistoryPage, items: list[Item],
               focus: int | None, top: bool) -> None:
        self.fetching = False
        if generation != self._generation:
            return
        rows = page.messages
        if how == "replace":
            expanded = {it.key for it in self.items if it.expanded}
            for item in items:
                if item.key in expanded:
                    item.expanded = True
                    item.invalidate()
            if not page.has_newer and rows:  # live notices are not in the log: keep them
                items = keep_notices(items, [it for it in self.items if it.kind == "notice"
                                             and it.seq >= rows[0].seq])
            self.items = items
            self.oldest_seq = rows[0].seq if rows else 0
            self.newest_seq = rows[-1].seq if rows else 0
            self.has_more, self.has_newer = page.has_more, page.has_newer
            self.selected = self._item_of(focus) if focus is not None else None
            self._reflow(follow=focus is None and not top)
            if focus is not None and self.selected is not None:
                self._center(self.selected)
            elif top:
                self.scroll_to(y=0, animate=False, immediate=True, force=True)
        elif how == "older":
            anchor = self.items[0] if self.items else None
            before = self._offsets[0] if self._offsets else 0
            self.items = join_results(items + self.items)
            self.has_more = page.has_more
            if rows:
                self.oldest_seq = rows[0].seq
            self._trim(end=True)
            self._reflow(follow=False)
            if anchor is not None and anchor in self.items:
                delta = self._offset_of(anchor) - before
                self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True, force=True)
        else:
            anchor = self.items[-1] if self.items else None
            before = self._offset_of(anchor) if anchor is not None else 0
            self.items = join_results(self.items + items)
            self.has_newer = page.has_newer
            if rows:
                self.newest_seq = rows[-1].seq
            removed = self._trim(end=False)
            self._reflow(follow=False)
            if removed and anchor is not None and anchor in self.items:
                delta = self._offset_of(anchor) - before
                self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True, force=True)
        self.call_after_refresh(self._check_paging)

    def _trim(self, *, end: bool) -> int:
        """Drop items beyond ``MAX_ITEMS`` at the newest (``end``) or oldest end."""
        extra = len(self.items) - self.MAX_ITEMS
        if extra <= 0:
            return 0
        if end:
            cut = self.items[-extra - 1].last_seq
            while self.items and self.items[-1].seq > cut:
                self.items.pop()
            self.newest_seq = max(it.last_seq for it in self.items)
            self.has_newer = True
            return extra
        cut = self.items[extra].seq
        keep = 0
        while keep < len(self.items) and (self.items[keep].last_seq < cut
                                          or self.items[keep].kind in MARKER_KINDS):
            keep += 1
        del self.items[:keep]
        self.oldest_seq = self.items[0].seq if self.items else cut
        self.has_more = True
        return keep

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
        self._total = y + (1 if self.has_newer else 0)
        self.virtual_size = Size(self.scrollable_content_region.width, self._total)
        self.refresh()
        if follow:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def _offset_of(self, item: Item) -> int:
        return self._offsets[self.items.index(item)]

    def _item_of(self, seq: int) -> Item | None:
        return next((it for it in self.items if it.seq == seq or it.result_seq == seq), None)

    def _center(self, item: Item) -> None:
        top = self._offset_of(item)
        height = self.scrollable_content_region.height
        self.scroll_to(y=max(top - height // 3, 0), animate=False, immediate=True, force=True)

    def on_resize(self, event: events.Resize) -> None:
        if self.content_width == self._width:
            return
        self._width = self.content_width
        follow = self.at_bottom
        anchor = self._item_at(int(self.scroll_y))
        self._reflow(follow=follow)
        if anchor is not None and not follow:
            self.scroll_to(y=self._offset_of(anchor), animate=False, immediate=True, force=True)

    def on_mount(self) -> None:
        self._resolve_palette()
        self.watch(self.app, "theme", lambda _: self._theme_changed(), init=False)

    def _theme_changed(self) -> None:
        self._rich_style_cache.clear()
        self._resolve_palette()
        for item in self.items:
            item.invalidate()
        self._reflow(follow=self.at_bottom)

    def _resolve_palette(self) -> None:
        def get(name: str) -> Style:
            return self.get_component_rich_style(f"history--{name}", partial=True)

        self._palette = Palette(user=get("user"), assistant=get("assistant"), tool=get("tool"),
                                dim=get("dim"), ok=get("ok"), error=get("error"),
                                warning=get("warning"), rule=get("dim"))

    def _item_at(self, line: int) -> Item | None:
        if not self.items or line < 1:
            return self.items[0] if self.items else None
        i = bisect_right(self._offsets, line) - 1
        return self.items[max(min(i, len(self.items) - 1), 0)]

    # -- drawing --------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if line == 0:
            return self._edge_line("start", width, base)
        if self.has_newer and line == self._total - 1:
            return self._edge_line("end", width, base)
        if line >= self._total or not self.items:
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
                gutter = Strip([_seg("▌ ", hit)])
                strip = strip.apply_style(Style(bgcolor=hit.bgcolor))
            elif item is self.selected and self.has_focus:
                gutter = Strip([_seg("▌ ", self.get_component_rich_style("history--cursor"))])
        return Strip.join([gutter, strip]).apply_style(base).crop_extend(
            scroll_x, scroll_x + width, base)

    def _edge_line(self, which: str, width: int, base: Style) -> Strip:
        dim = self.get_component_rich_style("history--dim")
        if which == "end":
            text = "↓ newer messages below · end jumps to the newest"
        elif self.fetching and self.has_more:
            text = "⟳ loading older messages…"
        elif self.has_more:
            text = "↑ older messages load as you scroll · home jumps to the start"
        else:
            text = "── start of the session ──" if self.items else "(no messages yet)"
        return Strip([_seg("  " + text, dim)]).apply_style(base).crop_extend(0, width, base)

    # -- keys and mouse -------------------------------------------------------
    def action_select(self, step: int) -> None:
        if not self.items:
            return
        if self.selected not in self.items:
            self.selected = self._item_at(int(self.scroll_y) + (
                self.scrollable_content_region.height - 1 if step < 0 else 1))
        else:
            assert self.selected is not None
            i = self.items.index(self.selected) + step
            self.selected = self.items[max(min(i, len(self.items) - 1), 0)]
        if self.selected is not None:
            top = self._offset_of(self.selected)
            region = Region(0, top, 1, max(self.selected.body, 1))
            self.scroll_to_region(region, animate=False, immediate=True, force=True)
            if step < 0 and self.items.index(self.selected) == 0:
                self.scroll_to(y=0, animate=False, immediate=True, force=True)
        self.refresh()

    def _reveal(self, item: Item) -> None:
        top = self._offset_of(item)
        region = Region(0, top, 1, max(min(item.body, self.scrollable_content_region.height), 1))
        self.scroll_to_region(region, animate=False, immediate=True, force=True)

    def action_expand(self) -> None:
        item = self.selected
        if item is not None and item.expandable:
            item.expanded = not item.expanded
            self._render_item(item)
            self._reflow(follow=False)

    def action_oldest(self) -> None:
        if self.has_more:
            self.load_oldest()
        else:
            self.scroll_to(y=0, animate=False, immediate=True, force=True)

    def action_newest(self) -> None:
        if self.has_newer:
            self.highlight_seq = None
            self.load_newest()
        else:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def on_click(self, event: events.Click) -> None:
        line = int(self.scroll_y) + event.y
        if line < 1 or line >= self._total:
            return
        item = self._item_at(line)
        if item is None:
            return
        if item is self.selected or item.expandable:
            self.selected = item
            self.action_expand()
        self.selected = item
        self.refresh()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


def keep_notices(items: list[Item], notices: list[Item]) -> list[Item]:
    """``items`` with ``notices`` put back after the last item of their seq."""
    out = list(items)
    for notice in notices:
        at = len(out)
        while at > 0 and out[at - 1].seq > notice.seq:
            at -= 1
        out.insert(at, notice)
    return out


def _seg(text: str, style: Style) -> Segment:
    return Segment(text, style)
