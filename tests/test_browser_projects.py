"""The all-projects view names each session's project; j/k move; CJK titles are cut
by cells with an ellipsis."""

from __future__ import annotations

import time
from pathlib import Path

from rich.cells import cell_len

from mttui.screens.browser import BrowserScreen
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from mttui.widgets.text import one_line
from tests.support.tui import SIZE, make_app, msg, screen_text, settle, write_session


def test_cjk_titles_are_cut_by_cells() -> None:
    cut = one_line("重构会话存储：快速分页与全文检索", 12)
    assert cut.endswith("…") and cell_len(cut) <= 12


async def test_all_projects_has_a_project_column(home: Path, tmp_path: Path) -> None:
    here, there = tmp_path / "alpha-app", tmp_path / "beta-lib"
    here.mkdir()
    there.mkdir()
    write_session(SessionService(home, there), "Elsewhere", [msg("user", "hi", 1)])
    service = SessionService(home, here)
    write_session(service, "Here", [msg("user", "hello", 1)])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Project" not in screen_text(app)
        await pilot.press("a")
        await settle(pilot)
        text = screen_text(app)
        assert "Project" in text and "beta-lib" in text and "alpha-app" in text
        assert "project" in text  # the preview names it
        table = app.screen.query_one(SessionTable)
        first = table.current_id
        await pilot.press("j")
        assert table.current_id != first
        await pilot.press("k")
        assert table.current_id == first
        assert isinstance(app.screen, BrowserScreen)


def _four(service: SessionService) -> None:
    for n in range(4):
        write_session(service, f"S{n}", [msg("user", f"hello {n}", 1)])
        time.sleep(0.01)  # distinct updated_at


async def test_after_a_delete_the_cursor_is_on_the_neighbour(service: SessionService) -> None:
    _four(service)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        order = [s.id for s in table.sessions]
        await pilot.press("j")  # the second row
        await pilot.press("d", "y")
        await settle(pilot)
        assert table.current_id == order[2]  # the next one, not the top
