"""The window of a history view: which items are kept, and their seq bounds.

Pure bookkeeping (no Textual): pages are joined at either end and the far end is
dropped beyond ``MAX_ITEMS``, always by whole messages, so that the next keyset
page (``before=oldest_seq`` / ``after=newest_seq``) continues without a gap or a
duplicate.
"""

from __future__ import annotations

from mttui.session.models import HistoryPage

from .history_items import MARKER_KINDS, Item, Marker, items_from_rows, join_results, markers_in
from .history_ledger import label_ledger
from .history_render import Palette, make_console, render_item
from .history_rewound import group_rewound


class HistoryWindow:
    MAX_ITEMS = 300

    def reset_window(self) -> None:
        self.items: list[Item] = []
        self.oldest_seq = 0
        self.newest_seq = 0
        self.has_more = False  # older messages exist
        self.has_newer = False  # newer messages exist (the live end is not shown)

    def replace_items(self, page: HistoryPage, items: list[Item]) -> None:
        rows = page.messages
        expanded = {it.key for it in self.items if it.expanded}
        for item in items:
            if item.key in expanded:
                item.expanded = True
                item.invalidate()
        if not page.has_newer and rows:  # live notices are not in the log: keep them
            items = keep_notices(items, [it for it in self.items
                                         if it.kind == "notice" and it.seq >= rows[0].seq])
        self.items = items
        self.oldest_seq = rows[0].seq if rows else 0
        self.newest_seq = rows[-1].seq if rows else 0
        self.has_more, self.has_newer = page.has_more, page.has_newer

    def prepend_items(self, page: HistoryPage, items: list[Item]) -> None:
        self.items = join_results(items + self.items)
        self.has_more = page.has_more
        if page.messages:
            self.oldest_seq = page.messages[0].seq
        self._trim(end=True)

    def append_items(self, page: HistoryPage, items: list[Item]) -> int:
        """Returns how many items were dropped at the oldest end."""
        self.items = join_results(self.items + items)
        self.has_newer = page.has_newer
        if page.messages:
            self.newest_seq = page.messages[-1].seq
        return self._trim(end=False)

    def item_of(self, seq: int) -> Item | None:
        return next((it for it in self.items if it.seq == seq or it.result_seq == seq), None)

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


def keep_notices(items: list[Item], notices: list[Item]) -> list[Item]:
    """``items`` with ``notices`` put back after the last item of their seq."""
    out = list(items)
    for notice in notices:
        at = len(out)
        while at > 0 and out[at - 1].seq > notice.seq:
            at -= 1
        out.insert(at, notice)
    return out


def page_items(page: HistoryPage, markers: list[Marker], width: int,
               palette: Palette) -> list[Item]:
    """The items of a page (with its markers), rendered at ``width`` (worker thread)."""
    rows = page.messages
    lo = rows[0].seq if rows else 1
    hi = rows[-1].seq if rows else 0
    mine = markers_in(markers, lo, hi, first=not page.has_more, last=not page.has_newer)
    items = items_from_rows(rows, mine)
    label_ledger(items, markers)  # settled calls, wherever their resolution was logged
    items = group_rewound(items, markers)  # a rewound branch: one collapsed line
    console = make_console(width)
    for item in items:
        render_item(item, width, palette, console)
    return items
