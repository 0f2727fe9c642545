"""The session list of the browser: one line per session, fed one keyset page at a time.

Drawn with Textual's line API (a row is one strip, its cells rendered once per draw):
the first frame of a start draws 34 rows in a few ms, where a ``DataTable`` needed
~20 ms for its cells (and its module ~5 ms to import).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from mttui.session.models import SessionInfo
from mttui.session.times import relative_time

from .badges import badges, fork_badge
from .text import one_line

Clock = Callable[[], datetime]
PROJECT_WIDTH = 14
MIN_TITLE = 16
PAD = 1  # blank cells on each side of a column's text

# (key, label, width); the title column takes what is left.
FIXED = [("updated", "Updated", 9), ("messages", "Msgs", 7), ("model", "Model", 12),
         ("status", "Status", 9)]


class SessionTable(ScrollView, can_focus=True):
    """Newest first; asks for the next page (``NeedMore``) when the cursor nears the end.
    A header line, then a row per session; the cursor is a whole row."""

    DEFAULT_CSS = """
    SessionTable { height: 1fr; background: $surface; color: $foreground;
                   overflow-x: hidden; }
    SessionTable:focus { background-tint: $foreground 5%; }
    SessionTable > .session-table--header { background: $panel; color: $text-muted;
                                            text-style: bold; }
    SessionTable > .session-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    SessionTable:focus > .session-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    SessionTable > .session-table--hover { background: $block-hover-background; }
    """
    COMPONENT_CLASSES = {"session-table--header", "session-table--cursor",
                         "session-table--hover"}
    PREFETCH = 15
    BINDINGS = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        # ids: the keys a user may rebind ([keys] of config.toml); the arrows stay
        Binding("j", "cursor_down", "Down", show=False, id="session_down"),
        Binding("k", "cursor_up", "Up", show=False, id="session_up"),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("home", "first_row", "First", show=False, id="first_session"),
        Binding("end", "last_row", "Last", show=False, id="last_session"),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class NeedMore(Message):
        """The cursor or the scroll position came near the last loaded row."""

    class RowsDrawn(Message):
        """The first frame with rows is being drawn: what it did not need may load now
        (handled once that frame is on the screen)."""

    class RowHighlighted(Message):
        """The cursor moved to another row."""

    class RowSelected(Message):
        """Enter, or a click on the row under the cursor."""

    def __init__(self, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.sessions: list[SessionInfo] = []
        self.more = False
        self._rows: list[list[Text]] = []  # the cells of the laid out rows
        self._index: dict[str, int] = {}  # session id -> row
        self._title_width = 0
        self.show_project = False  # the all-projects view: a Project column
        self._columns: list[tuple[str, str, int]] = list(FIXED)
        self._hover: int | None = None
        self.fallback: str | None = None  # where the cursor goes if its row is gone
        self._drawn = False  # RowsDrawn was posted

    # -- data -----------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def _laid_out(self) -> bool:
        """The columns have a width (the title's is never under ``MIN_TITLE`` once set)."""
        return self._title_width > 0

    @property
    def widths(self) -> list[int]:
        """The columns' widths (text only, without their padding), the title's first."""
        return [self._title_width] + [w for _, _, w in self._columns]

    def set_sessions(self, sessions: list[SessionInfo], *, reset: bool, more: bool) -> None:
        keep = self.current_id if reset else None
        fallback, self.fallback = self.fallback, None
        self.more = False  # no paging requests while the rows change
        if reset:
            self.sessions, self._rows, self._index = [], [], {}
        now = self.clock()
        for info in sessions:
            if info.id not in self._index:
                self._index[info.id] = len(self.sessions)
                self.sessions.append(info)
                if self._laid_out:
                    self._rows.append(self._cells(info, now))
        if not self._laid_out:  # the width guessed from the terminal's (else: first resize)
            self._layout_columns(self._expected_width())
        self._changed()
        if reset:
            row = self._index.get(keep or "", self._index.get(fallback or "", 0))
            self.move_cursor(row=row)
        elif fallback is not None and fallback in self._index:
            self.move_cursor(row=self._index[fallback])
        self.more = more

    def row_cells(self, row: int) -> list[Text]:
        return list(self._rows[row])

    def neighbour_of(self, session_id: str) -> str | None:
        """The session after ``session_id`` in the list (the one before, at the end)."""
        ids = [s.id for s in self.sessions]
        if session_id not in ids or len(ids) < 2:
            return None
        i = ids.index(session_id)
        return ids[i + 1] if i + 1 < len(ids) else ids[i - 1]

    def _cells(self, info: SessionInfo, now: datetime) -> list[Text]:
        title = one_line(("(incomplete fork) " if info.fork_incomplete else "")
                         + (info.title or info.last_message_preview or "(untitled)"),
                         max(self._title_width, 10))
        cells = {
            "updated": Text(relative_time(info.updated_at, now), no_wrap=True),
            "messages": Text(f"{info.message_count:,}", justify="right", no_wrap=True),
            "project": Text(one_line(Path(info.project).name or info.project, PROJECT_WIDTH),
                            style="dim", no_wrap=True),
            "model": Text(one_line(info.model or "—", 12), style="dim", no_wrap=True),
            "status": fork_badge(info) + badges(info.status),
        }
        return [Text(title, style="" if info.title else "italic", no_wrap=True)] + [
            cells[key] for key, _, _ in self._columns]

    def _fixed(self, width: int) -> list[tuple[str, str, int]]:
        """The fixed columns; in the all-projects view the Project replaces the Model
        (the preview shows the model). A narrow list drops columns until the title
        keeps ``MIN_TITLE`` cells: the Model (or Project) first (80 columns), then the
        Msgs, then Updated; the Status (running, failed, …) stays."""
        cols = FIXED
        if self.show_project:
            cols = [("project", "Project", PROJECT_WIDTH) if key == "model" else (key, label, w)
                    for key, label, w in FIXED]
        for dropped in ("model", "project", "messages", "updated"):
            if not width or width - sum(w + 2 * PAD for _, _, w in cols) - 2 * PAD >= MIN_TITLE:
                break
            cols = [c for c in cols if c[0] != dropped]
        return cols

    def set_scope(self, all_projects: bool) -> None:
        """The all-projects view has a Project column (its folder's name)."""
        if all_projects != self.show_project:
            self.show_project = all_projects
            self._title_width = 0  # lay the columns out again
            self._layout_columns()

    @property
    def current(self) -> SessionInfo | None:
        if not self._rows or not 0 <= self.cursor_row < len(self._rows):
            return None
        return self.sessions[self.cursor_row]

    @property
    def current_id(self) -> str | None:
        info = self.current
        return info.id if info else None

    # -- layout ---------------------------------------------------------------
    def _layout_columns(self, expected: int = 0) -> None:
        width = self.scrollable_content_region.width or expected
        if not width:
            return  # not laid out yet (mounted, not sized): the first resize does it
        columns = self._fixed(width)
        fixed = sum(w + 2 * PAD for _, _, w in columns)
        title = max(width - fixed - 2 * PAD, MIN_TITLE)
        if title == self._title_width and columns == self._columns:
            return
        self._title_width, self._columns = title, columns
        now = self.clock()
        self._rows = [self._cells(info, now) for info in self.sessions]
        self._changed()

    def _expected_width(self) -> int:
        """The width the first layout will give this list's rows, guessed before it:
        its CSS width resolved against the terminal's, less the vertical scrollbar when
        the rows will overflow (0: not known yet). Laying the columns out for it lets
        the first frame hold the rows, not an empty list then a second frame; the first
        resize lays them out again only if the guess was wrong."""
        screen = self.app.size
        width = self.styles.width
        if width is None or not screen.width:
            return 0
        try:
            share = int(width.resolve(screen, screen))
        except (ArithmeticError, ValueError, TypeError):  # fr, auto: known only after layout
            return 0
        if len(self.sessions) + 1 > screen.height - 2:  # the header; the screen's bar, footer
            share -= self.styles.scrollbar_size_vertical
        return share

    def _changed(self) -> None:
        """The rows changed: the scrollable height, and a repaint."""
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._rows) + 1)
        if self.cursor_row >= len(self._rows) > 0:
            self.cursor_row = len(self._rows) - 1
        self.refresh()

    def on_mount(self) -> None:
        self._layout_columns()

    def on_resize(self, event: events.Resize) -> None:
        self._layout_columns()
        self._changed()

    # -- drawing ----------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            header = self.get_component_rich_style("session-table--header")
            labels = [Text("Title")] + [Text(label, justify="right" if key == "messages"
                                             else "left") for key, label, _ in self._columns]
            return self._strip(labels, width, base + header)
        row = int(self.scroll_y) + y - 1
        if row >= len(self._rows):
            return Strip.blank(width, base)
        if not self._drawn:
            self._drawn = True
            self.post_message(self.RowsDrawn())
        style = base
        if row == self._hover:
            style += self.get_component_rich_style("session-table--hover")
        over: Style | None = None
        if row == self.cursor_row:
            over = self.get_component_rich_style("session-table--cursor")
        return self._strip(self._rows[row], width, style, over)

    def _strip(self, cells: list[Text], width: int, style: Style,
               over: Style | None = None) -> Strip:
        console = self.app.console
        segments: list[Segment] = []
        for column, (cell, w) in enumerate(zip(cells, self.widths, strict=False)):
            text = Text(end="").append_text(cell)  # the cell's style as a span: rendered
            text.truncate(w, overflow="ellipsis")
            text.align("right" if cell.justify == "right" else "left", w)
            text.pad(PAD)
            # the column in each cell's style keeps cells apart: an SVG screenshot draws a
            # run of equal styles as one text, where a wide (CJK) title moved what follows
            cell_style = style + Style.from_meta({"column": column})
            segments.extend(Segment.apply_style(text.render(console), cell_style, over))
        fill = style + over if over is not None else style
        return Strip(segments).extend_cell_length(width, fill).crop(0, width)

    def watch_cursor_row(self, old: int, new: int) -> None:
        if self._rows and not 0 <= new < len(self._rows):
            self.cursor_row = max(0, min(new, len(self._rows) - 1))
            return
        self._scroll_to_cursor()
        self.refresh()
        if old != new:
            self.post_message(self.RowHighlighted())
        if self.more and new >= len(self._rows) - self.PREFETCH:
            self.post_message(self.NeedMore())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.more and 0 < self.max_scroll_y <= new_value + self.size.height:
            self.post_message(self.NeedMore())

    def _scroll_to_cursor(self) -> None:
        visible = self.scrollable_content_region.height - 1  # below the header
        if visible < 1:
            return
        top = int(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False, immediate=True)

    # -- keys and mouse -------------------------------------------------------
    def move_cursor(self, *, row: int) -> None:
        self.cursor_row = row

    def action_cursor_down(self) -> None:
        if self._rows:
            self.cursor_row = min(self.cursor_row + 1, len(self._rows) - 1)

    def action_cursor_up(self) -> None:
        if self._rows:
            self.cursor_row = max(self.cursor_row - 1, 0)

    def action_page_down(self) -> None:
        if self._rows:
            page = max(self.scrollable_content_region.height - 1, 1)
            self.cursor_row = min(self.cursor_row + page, len(self._rows) - 1)

    def action_page_up(self) -> None:
        if self._rows:
            page = max(self.scrollable_content_region.height - 1, 1)
            self.cursor_row = max(self.cursor_row - page, 0)

    def action_first_row(self) -> None:
        if self._rows:
            self.cursor_row = 0

    def action_last_row(self) -> None:
        """The last loaded row (loading the next page, if any, as the cursor nears it)."""
        if self._rows:
            self.cursor_row = len(self._rows) - 1

    def action_select_cursor(self) -> None:
        if self.current is not None:
            self.post_message(self.RowSelected())

    def _row_at(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return None
        row = int(self.scroll_y) + offset.y - 1
        return row if row < len(self._rows) else None

    def on_click(self, event: events.Click) -> None:
        row = self._row_at(event)
        if row is None:
            return
        event.stop()
        if row == self.cursor_row:
            self.post_message(self.RowSelected())
        else:
            self.cursor_row = row

    def on_mouse_move(self, event: events.MouseMove) -> None:
        row = self._row_at(event)
        if row != self._hover:
            self._hover = row
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.refresh()
