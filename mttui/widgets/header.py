"""The chat's header line, fitted to its width: what to shorten first.

``mttui  <title>  ·  <id>  ·  <project path> (<branch>)``. When that is too wide,
the project path loses its middle (``~/work/…/shop``, the branch always stays),
then the title is cut with ``…``, then the session id goes, then the separators
narrow; a header never wraps and never loses its branch before its id.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.widget import Widget

from .text import literal

MIN_TITLE = 12  # cells a title keeps before the id is dropped


def middle_path(path: str, limit: int) -> str:
    """``path`` in at most ``limit`` cells, its middle replaced by ``…``; never less than
    its last part (``…/shop``)."""
    if cell_len(path) <= limit:
        return path
    parts = path.split("/")
    last = parts[-1] or path
    floor = "…/" + last
    if len(parts) < 3 or limit <= cell_len(floor):
        return floor
    head = "" if parts[0] == "…" else parts[0] + "/" if parts[0] else "/"  # "~/", "/"
    tail = last
    for part in reversed(parts[1:-1]):  # keep the parts nearest the folder first
        longer = part + "/" + tail
        if cell_len(head + "…/" + longer) > limit:
            break
        tail = longer
    if cell_len(head + "…/" + tail) <= limit:
        return head + "…/" + tail
    return floor


def cut(text: str, limit: int) -> str:
    if cell_len(text) <= limit:
        return text
    return set_cell_size(text, max(limit - 1, 0)).rstrip() + "…"


@dataclass(frozen=True)
class Header:
    """What the header says; :meth:`render` fits it into ``width`` cells."""

    title: str | None = None  # None: not known yet (or a new session)
    session_id: str | None = None
    new: bool = False  # a new session: says so instead of a title
    path: str = ""
    branch: str | None = None
    extra: str = ""

    def parts(self, sep: str) -> list[tuple[str, str]]:
        parts: list[tuple[str, str]] = [("mttui", "bold")]
        if self.new:
            parts.append(("  new session", "dim"))
        elif self.title is not None:
            parts.append(("  " + literal(self.title or "(untitled)"), "bold"))
            if self.session_id:
                parts.append((sep + self.session_id, "dim"))
        if self.path:
            branch = f" ({literal(self.branch)})" if self.branch else ""
            parts.append((sep + literal(self.path) + branch, "dim"))
        if self.extra:
            parts.append((sep + self.extra, "yellow"))
        return parts

    def render(self, width: int) -> Text:
        fitted = self.fit(width)
        line = Text(no_wrap=True, overflow="ellipsis")
        for words, style in fitted.parts(fitted.separator(width)):
            line.append(words, style=style)
        return line

    def separator(self, width: int) -> str:
        return "  ·  " if self.width_with("  ·  ") <= width else " · "  # fit() chose the same

    def width_with(self, sep: str) -> int:
        return sum(cell_len(words) for words, _ in self.parts(sep))

    def fit(self, width: int) -> Header:
        """The header shortened step by step until it fits (or nothing is left to cut)."""
        wide = "  ·  "
        over = self.width_with(wide) - width
        if over <= 0:
            return self
        me = self
        if me.path:  # 1. the middle of the project path
            me = replace(me, path=middle_path(me.path, max(cell_len(me.path) - over, 0)))
            over = me.width_with(wide) - width
        title = me.title
        if over <= 0 or not title:
            return me
        if cell_len(title) - over >= MIN_TITLE:  # 2. the title
            return replace(me, title=cut(title, cell_len(title) - over))
        me = replace(me, session_id=None)  # 3. the id, then the title as needed
        slack = max(cell_len(title) - MIN_TITLE, 0)
        sep = wide if me.width_with(wide) - width <= slack else " · "
        over = me.width_with(sep) - width
        if over > 0:
            me = replace(me, title=cut(title, max(cell_len(title) - over, 4)))
        return me


class HeaderBar(Widget):
    """The header line: draws its :class:`Header` fitted to the width it has now."""

    DEFAULT_CSS = "HeaderBar { height: 1; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.header = Header()

    def show(self, header: Header) -> None:
        self.header = header
        self.refresh()

    def render(self) -> Text:
        return self.header.render(max(self.content_size.width, 1))
