"""The browser shows its first page from the index before the catch-up (a stat of every
log) and refreshes the rows when the catch-up changed something, keeping the cursor."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip

from mttui.app import MttuiApp
from mttui.screens import browser
from mttui.session.first_page import FirstPage
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import SIZE, make_app, msg, wait_for, write_session


class HeldCatchUp(SessionService):
    """A service whose catch-ups wait until the test lets them go."""

    def __init__(self, home: Path, project: Path) -> None:
        super().__init__(home, project)
        self.go = threading.Event()
        self.started = threading.Event()

    def catch_up(self, *, all_projects: bool = False) -> bool:
        self.started.set()
        assert self.go.wait(30)
        return super().catch_up(all_projects=all_projects)


def _written_behind(home: Path, project: Path, tmp_path: Path) -> str:
    """A session log the index of ``home`` has never seen (another home's, copied in)."""
    elsewhere = SessionService(tmp_path / "elsewhere", project)
    sid = write_session(elsewhere, "Written behind", [msg("user", "hi", 1)])
    src = elsewhere.get(sid).path
    elsewhere.close()
    dst = home / "history" / src.parent.name / src.name
    dst.write_bytes(src.read_bytes())
    return sid


def _three(home: Path, project: Path, tmp_path: Path) -> tuple[str, str, str]:
    """Two sessions the index knows (older, newer) and a newest one it does not."""
    writer = SessionService(home, project)
    old = write_session(writer, "Old one", [msg("user", "hello", 1)])
    time.sleep(0.01)
    newer = write_session(writer, "Newer", [msg("user", "hello again", 1)])
    writer.close()
    time.sleep(0.01)
    return old, newer, _written_behind(home, project, tmp_path)


async def test_first_page_before_the_catch_up(home: Path, project: Path,
                                              tmp_path: Path) -> None:
    old, newer, behind = _three(home, project, tmp_path)
    service = HeldCatchUp(home, project)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        # the catch-up starts and waits; the rows are there
        await wait_for(pilot, service.started.is_set)
        assert [s.id for s in table.sessions] == [newer, old]
        await pilot.press("j")
        assert table.current_id == old
        service.go.set()
        await wait_for(pilot, lambda: table.row_count == 3 and not app.screen.fetching)
        assert [s.id for s in table.sessions] == [behind, newer, old]
        assert table.current_id == old  # the refresh kept the cursor


async def test_deferred_imports_wait_for_the_first_frame_with_rows(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the first page's frame does not need (dialogs, search, the preview's verdict)
    is imported once that frame is drawn, not between the rows' layout and their frame."""
    writer = SessionService(home, project)
    write_session(writer, "Only one", [msg("user", "hello", 1)])
    writer.close()
    drawn: list[int] = []  # frames of the table drawn with rows
    render = SessionTable.render_lines

    def counted(self: SessionTable, crop: Region) -> list[Strip]:
        if self.row_count:
            drawn.append(self.row_count)
        return render(self, crop)

    calls: list[int] = []  # frames with rows drawn when the imports ran
    monkeypatch.setattr(SessionTable, "render_lines", counted)
    monkeypatch.setattr(browser, "import_deferred", lambda: calls.append(len(drawn)))
    service = SessionService(home, project)
    app = make_app(service, first_page=FirstPage(service))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(calls) and not app.screen.fetching)
        assert calls[0] > 0  # after the table's first frame with its row


def _sessions(home: Path, project: Path, count: int) -> None:
    writer = SessionService(home, project)
    for i in range(count):
        write_session(writer, f"Session {i}", [msg("user", f"hello {i}", 1)])
    writer.close()


@pytest.mark.parametrize("count", [2, 45])  # fewer rows than fit; more (a scrollbar)
async def test_the_first_frame_shown_holds_the_rows(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """The browser's first frame is drawn once, with its rows: not inside the app's
    start-up batch (where Textual throws the frame away), and with the columns laid out
    for the width the layout then gives (no empty frame, no second layout)."""
    _sessions(home, project, count)
    shown: list[tuple[int, int]] = []  # (batch depth, rows) of each frame sent to display
    display = MttuiApp._display

    def recorded(self: MttuiApp, screen: Screen[Any], renderable: Any) -> None:
        if renderable is not None and isinstance(screen, browser.BrowserScreen):
            shown.append((self._batch_count, screen.table.row_count))
        display(self, screen, renderable)

    layouts: list[list[int]] = []  # the column widths of each layout that changed them
    layout = SessionTable._layout_columns

    def counted(self: SessionTable, expected: int = 0) -> None:
        before = self.widths if self._laid_out else None
        layout(self, expected)
        if self._laid_out and self.widths != before:
            layouts.append(self.widths)

    monkeypatch.setattr(MttuiApp, "_display", recorded)
    monkeypatch.setattr(SessionTable, "_layout_columns", counted)
    service = SessionService(home, project)
    app = make_app(service, first_page=FirstPage(service))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(shown) and not app.screen.fetching)
        await pilot.pause()
        table = app.screen.query_one(SessionTable)
        assert shown[0] == (0, count)  # displayed, and with every row of the first page
        assert len(layouts) == 1  # the columns' first layout was the one that stayed
        assert sum(w + 2 for w in table.widths) == table.scrollable_content_region.width
