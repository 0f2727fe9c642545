"""Moving through the history with the keyboard and the mouse (HistoryView's actions).

The functions take any :class:`NavigableView` (the history view is one), so this
module does not import the view.
"""

from __future__ import annotations

from typing import Protocol

from textual.geometry import Region

from .history_items import Item
from .history_rewound import is_hidden, members


class NavigableView(Protocol):
    """What the navigation needs of the history view."""

    items: list[Item]
    selected: Item | None
    highlight_seq: int | None
    has_more: bool
    has_newer: bool

    @property
    def scroll_y(self) -> float: ...
    @property
    def max_scroll_y(self) -> float: ...
    @property
    def scrollable_content_region(self) -> Region: ...
    @property
    def line_count(self) -> int: ...

    def offset_of(self, item: Item) -> int: ...
    def item_at(self, line: int) -> Item | None: ...
    def rerender(self, item: Item) -> None: ...
    def load_oldest(self) -> None: ...
    def load_newest(self) -> None: ...
    def scroll_to_y(self, y: float) -> None: ...
    def scroll_to_region(self, region: Region, *, animate: bool = ..., immediate: bool = ...,
                         force: bool = ...) -> object: ...
    def refresh(self) -> object: ...


def reveal(view: NavigableView, item: Item) -> None:
    """Scroll so that ``item`` (its start, at least) is visible."""
    height = view.scrollable_content_region.height
    region = Region(0, view.offset_of(item), 1, max(min(item.body, height), 1))
    view.scroll_to_region(region, animate=False, immediate=True, force=True)


def select(view: NavigableView, item: Item) -> None:
    if item in view.items:
        view.selected = item
        reveal(view, item)
        view.refresh()


def step(view: NavigableView, delta: int) -> None:
    """Select the previous (-1) or next (+1) item; start from what is on screen."""
    items = view.items
    if not items:
        return
    if view.selected not in items:
        at = int(view.scroll_y) + (view.scrollable_content_region.height - 1 if delta < 0 else 1)
        view.selected = view.item_at(at)
    else:
        assert view.selected is not None
        i = items.index(view.selected) + delta
        while 0 <= i < len(items) and is_hidden(items[i]):  # a collapsed rewound branch
            i += delta
        view.selected = items[max(min(i, len(items) - 1), 0)]
    if view.selected is not None:
        reveal(view, view.selected)
        if delta < 0 and items.index(view.selected) == 0:  # show the line above: paging
            view.scroll_to_y(0)
    view.refresh()


def toggle(view: NavigableView) -> None:
    item = view.selected
    if item is not None and item.expandable:
        item.expanded = not item.expanded
        for member in members(view.items, item):  # a rewound branch opens or closes
            member.invalidate()
        view.rerender(item)
        if item.expanded:  # what opened below the bottom comes into view
            reveal(view, item)


def oldest(view: NavigableView) -> None:
    if view.has_more:
        view.load_oldest()
    else:
        view.scroll_to_y(0)


def newest(view: NavigableView) -> None:
    if view.has_newer:
        view.highlight_seq = None
        view.load_newest()
    else:
        view.scroll_to_y(view.max_scroll_y)


def click(view: NavigableView, y: int) -> None:
    """A click on line ``y`` of the view selects the item there, and opens or closes it."""
    line = int(view.scroll_y) + y
    if line < 1 or line >= view.line_count:
        return
    item = view.item_at(line)
    if item is None:
        return
    if item is view.selected or item.expandable:
        view.selected = item
        toggle(view)
    view.selected = item
    view.refresh()
