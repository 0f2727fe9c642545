"""The session list of the browser: a DataTable fed one keyset page at a time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import DataTable

from mttui.session.models import SessionInfo
from mttui.session.times import relative_time

from .badges import badges, fork_badge
from .text import one_line

Clock = Callable[[], datetime]
PROJECT_WIDTH = 14
MIN_TITLE = 16

# (key, label, width); the title column takes what is left.
FIXED = [("updated", "Updated", 9), ("messages", "Msgs", 7), ("model", "Model", 12),
         ("status", "Status", 9)]


class SessionTable(DataTable[Text]):
    """Newest first; asks for the next page (``NeedMore``) when the cursor nears the end."""

    DEFAULT_CSS = """
    SessionTable { height: 1fr; background: $surface; }
    SessionTable > .datatable--header { background: $panel; color: $text-muted; }
    """
    PREFETCH = 15
    # DataTable's home/end scroll sideways; in a list of sessions they mean first/last row.
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="session_down"),
        Binding("k", "cursor_up", "Up", show=False, id="session_up"),
        Binding("home", "first_row", "First", show=False, id="first_session"),
        Binding("end", "last_row", "Last", show=False, id="last_session"),
    ]

    class NeedMore(Message):
        """The cursor or the scroll position came near the last loaded row."""

    class RowsDrawn(Message):
        """The first frame with rows is being drawn: what it did not need may load now
        (handled once that frame is on the screen)."""

    def __init__(self, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.clock = clock
        self.sessions: list[SessionInfo] = []
        self.more = False
        self._title_width = 0
        self.show_project = False  # the all-projects view: a Project column
        self._columns: list[tuple[str, str, int]] = list(FIXED)
        self.fallback: str | None = None  # where the cursor goes if its row is gone
        self._drawn = False  # RowsDrawn was posted

    # -- data -----------------------------------------------------------------
    def set_sessions(self, sessions: list[SessionInfo], *, reset: bool, more: bool) -> None:
        if not self.columns:  # not laid out yet: its first layout adds the rows
            if reset:
                self.sessions = []
            known = {s.id for s in self.sessions}
            for info in sessions:
                if info.id not in known:
                    known.add(info.id)
                    self.sessions.append(info)
            self.more = more
            self._layout_columns(self._expected_width())  # no-op until the size is known
            return
        keep = self.current_id if reset else None
        fallback, self.fallback = self.fallback, None
        self.more = False  # no paging requests while the rows change
        if reset:
            self.sessions = []
            self.clear()
        now = self.clock()
        seen = {str(k.value) for k in self.rows}
        for info in sessions:
            if info.id not in seen:
                seen.add(info.id)
                self.sessions.append(info)
                self.add_row(*self._cells(info, now), key=info.id)
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        elif fallback is not None and fallback in self.rows:
            self.move_cursor(row=self.get_row_index(fallback), animate=False)
        self.more = more

    def neighbour_of(self, session_id: str) -> str | None:
        """The session after ``session_id`` in the list (the one before, at the end)."""
        ids = [s.id for s in self.sessions]
        if session_id not in ids or len(ids) < 2:
            return None
        i = ids.index(session_id)
        return ids[i + 1] if i + 1 < len(ids) else ids[i - 1]

    def _cells(self, info: SessionInfo, now: datetime) -> list[Text]:
        title = one_line(info.title or info.last_message_preview or "(untitled)",
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
        (the preview shows the model); a narrow list (80 columns) drops the Model so
        that the Status column fits."""
        cols = FIXED
        if self.show_project:
            cols = [("project", "Project", PROJECT_WIDTH) if key == "model" else (key, label, w)
                    for key, label, w in FIXED]
        if width and width - sum(w + 2 for _, _, w in cols) - 2 < MIN_TITLE:
            cols = [c for c in cols if c[0] not in ("model", "project")]
        return cols

    def set_scope(self, all_projects: bool) -> None:
        """The all-projects view has a Project column (its folder's name)."""
        if all_projects != self.show_project:
            self.show_project = all_projects
            self._title_width = 0  # lay the columns out again
            self._layout_columns()

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, animate=False)

    def action_last_row(self) -> None:
        """The last loaded row (loading the next page, if any, as the cursor nears it)."""
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)

    @property
    def current(self) -> SessionInfo | None:
        if not self.sessions or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        key = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        return next((s for s in self.sessions if s.id == key), None)

    @property
    def current_id(self) -> str | None:
        info = self.current
        return info.id if info else None

    # -- layout ---------------------------------------------------------------
    def _layout_columns(self, expected: int = 0) -> None:
        width = self.scrollable_content_region.width or self.size.width or expected
        if not width:
            return  # not laid out yet (mounted, not sized): the first resize does it
        columns = self._fixed(width)
        fixed = sum(w + 2 for _, _, w in columns)
        title = max(width - fixed - 2, MIN_TITLE)
        if title == self._title_width and self.columns and columns == self._columns:
            return
        self._title_width, self._columns = title, columns
        keep, more = self.current_id, self.more
        self.more = False
        self.clear(columns=True)
        self.add_column(Text("Title"), width=title, key="title")
        for key, label, w in columns:
            self.add_column(Text(label, justify="right" if key == "messages" else None),
                            width=w, key=key)
        now = self.clock()
        for info in self.sessions:
            self.add_row(*self._cells(info, now), key=info.id)
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        self.more = more

    def on_mount(self) -> None:
        self._layout_columns()

    def _expected_width(self) -> int:
        """The width the first layout will give this table's rows, guessed before it:
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

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        if not self._drawn and self.row_count:
            self._drawn = True
            self.post_message(self.RowsDrawn())
        return lines

    def on_resize(self, event: events.Resize) -> None:
        self._layout_columns()

    # -- paging ---------------------------------------------------------------
    def watch_cursor_coordinate(self, old: Coordinate, new: Coordinate) -> None:
        super().watch_cursor_coordinate(old, new)
        if self.more and new.row >= self.row_count - self.PREFETCH:
            self.post_message(self.NeedMore())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.more and 0 < self.max_scroll_y <= new_value + self.size.height:
            self.post_message(self.NeedMore())
