"""Moving through the history with the keyboard and the mouse (HistoryView's actions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region

from .history_items import Item

if TYPE_CHECKING:
    from .history import HistoryView


def reveal(view: HistoryView, item: Item) -> None:
    """Scroll so that ``item`` (its start, at least) is visible."""
    height = view.scrollable_content_region.height
    region = Region(0, view._offset_of(item), 1, max(min(item.body, height), 1))
    view.scroll_to_region(region, animate=False, immediate=True, force=True)


def select(view: HistoryView, item: Item) -> None:
    if item in view.items:
        view.selected = item
        reveal(view, item)
        view.refresh()


def step(view: HistoryView, delta: int) -> None:
    """Select the previous (-1) or next (+1) item; start from what is on screen."""
    items = view.items
    if not items:
        return
    if view.selected not in items:
        at = int(view.scroll_y) + (view.scrollable_content_region.height - 1 if delta < 0 else 1)
        view.selected = view._item_at(at)
    else:
        assert view.selected is not None
        i = items.index(view.selected) + delta
        view.selected = items[max(min(i, len(items) - 1), 0)]
    if view.selected is not None:
        reveal(view, view.selected)
        if delta < 0 and items.index(view.selected) == 0:  # show the line above: paging
            view.scroll_to(y=0, animate=False, immediate=True, force=True)
    view.refresh()


def toggle(view: HistoryView) -> None:
    item = view.selected
    if item is not None and item.expandable:
        item.expanded = not item.expanded
        view._render_item(item)
        view._reflow(follow=False)


def oldest(view: HistoryView) -> None:
    if view.has_more:
        view.load_oldest()
    else:
        view.scroll_to(y=0, animate=False, immediate=True, force=True)


def newest(view: HistoryView) -> None:
    if view.has_newer:
        view.highlight_seq = None
        view.load_newest()
    else:
        view.scroll_to(y=view.max_scroll_y, animate=False, immediate=True, force=True)


def click(view: HistoryView, y: int) -> None:
    """A click on line ``y`` of the view selects the item there, and opens or closes it."""
    line = int(view.scroll_y) + y
    if line < 1 or line >= view._total:
        return
    item = view._item_at(line)
    if item is None:
        return
    if item is view.selected or item.expandable:
        view.selected = item
        toggle(view)
    view.selected = item
    view.refresh()
