"""The session browser: paged list, preview, open, rename, delete, all projects."""

from __future__ import annotations

from pathlib import Path

from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.screens.dialogs import ConfirmScreen, RenameScreen
from mttui.session.service import SessionService
from mttui.widgets.preview import PreviewPane
from mttui.widgets.session_table import SessionTable
from tests.support.tui import (
    SIZE,
    chat_records,
    make_app,
    msg,
    notes_of,
    screen_text,
    settle,
    write_session,
)


def three(service: SessionService) -> list[str]:
    return [write_session(service, f"Session {i}", [msg("user", f"hello {i}", 1)])
            for i in range(3)]


async def test_lists_newest_first_and_previews(service: SessionService, frozen) -> None:
    ids = three(service)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        assert [s.id for s in table.sessions] == ids[::-1]
        assert app.screen.query_one(PreviewPane).session_id == ids[2]
        text = screen_text(app)
        assert "Session 2" in text and "hello 2" in text and "Resume" in text
        await pilot.press("down")
        await settle(pilot)
        assert app.screen.query_one(PreviewPane).session_id == ids[1]
        assert "hello 1" in screen_text(app)


async def test_enter_opens_the_session(service: SessionService, frozen) -> None:
    sid = write_session(service, "Long one", chat_records(120))
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        assert app.screen.chat.session_id == sid
        view = app.screen.history
        assert view.newest_seq == 120 and view.oldest_seq == 71
        assert "Answer 120: all good." in screen_text(app)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)


async def test_a_click_moves_the_cursor_and_a_second_click_opens(
        service: SessionService, frozen) -> None:
    ids = three(service)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await pilot.click(SessionTable, offset=(4, 0))  # the header: nothing
        await pilot.click(SessionTable, offset=(4, 3))  # the third row
        await settle(pilot)
        assert table.cursor_row == 2 and isinstance(app.screen, BrowserScreen)
        assert app.screen.query_one(PreviewPane).session_id == ids[0]
        await pilot.click(SessionTable, offset=(4, 3))
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen) and app.screen.chat.session_id == ids[0]


async def test_page_keys_move_the_cursor_a_screen_at_a_time(service: SessionService,
                                                            frozen) -> None:
    for i in range(60):
        write_session(service, f"s{i:03d}", [])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        rows = table.scrollable_content_region.height - 1  # below the header
        await pilot.press("pagedown")
        assert table.cursor_row == rows
        assert table.scroll_y <= table.cursor_row < table.scroll_y + rows  # in sight
        await pilot.press("end")
        assert table.cursor_row == 59 and table.current_id == table.sessions[-1].id
        assert table.scroll_y <= 59 < table.scroll_y + rows
        await pilot.press("pageup", "home")
        assert table.cursor_row == 0 and table.scroll_y == 0


async def test_session_list_pages_as_the_cursor_moves(service: SessionService, frozen) -> None:
    for i in range(130):
        write_session(service, f"s{i:03d}", [])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        assert len(table.sessions) == 100 and table.more
        table.move_cursor(row=80)
        await pilot.press("down", "down", "down", "down", "down")
        await settle(pilot)
        assert len(table.sessions) == 130 and not table.more
        titles = [s.title for s in table.sessions]
        assert titles == [f"s{i:03d}" for i in range(129, -1, -1)]


async def test_rename(service: SessionService, frozen) -> None:
    ids = three(service)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        assert isinstance(app.screen, RenameScreen)
        await pilot.press("ctrl+u", *"Renamed [b]!", "enter")
        await settle(pilot)
        assert service.get(ids[2]).title == "Renamed [b]!"
        assert "Renamed [b]!" in screen_text(app)


async def test_delete_asks_first(service: SessionService, frozen) -> None:
    ids = three(service)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert len(service.list_sessions().sessions) == 3
        await pilot.press("d")
        await pilot.press("y")
        await settle(pilot)
        left = [s.id for s in service.list_sessions().sessions]
        assert left == [ids[1], ids[0]]
        assert [s.id for s in app.screen.query_one(SessionTable).sessions] == left


async def test_deleting_or_renaming_a_session_another_process_writes_says_why(
    service: SessionService, frozen
) -> None:
    ids = three(service)
    app = make_app(service)
    said = notes_of(app)
    with service.open_writer(ids[2]):  # the newest, under the cursor, written elsewhere
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("d", "y")
            await settle(pilot)
            assert said and said[-1][0] == "Cannot delete", said
            assert said[-1][1].startswith("session is open for writing in process"), said
            assert len(service.list_sessions().sessions) == 3
            await pilot.press("r")
            app.screen.query_one("#title").value = "New name"  # type: ignore[attr-defined]
            await pilot.press("enter")
            await settle(pilot)
            assert said[-1][0] == "Cannot rename", said
            assert service.get(ids[2]).title == "Session 2"


async def test_all_projects_toggle(service: SessionService, home: Path, tmp_path: Path,
                                   frozen) -> None:
    three(service)
    other = tmp_path / "other"
    other.mkdir()
    write_session(SessionService(home, other), "Elsewhere", [])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        assert "Elsewhere" not in [s.title for s in table.sessions]
        await pilot.press("a")
        await settle(pilot)
        assert [s.title for s in table.sessions][0] == "Elsewhere"
        assert "all projects" in screen_text(app)


async def test_new_session_from_the_browser(service: SessionService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "No sessions" in screen_text(app)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen) and app.screen.chat.session_id is None


async def test_end_and_home_move_the_cursor_to_the_last_and_first_session(
        service: SessionService, frozen) -> None:
    for i in range(130):
        write_session(service, f"s{i:03d}", [])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await pilot.press("end")
        await settle(pilot)
        # the last loaded row; being near the end loads the next page
        assert table.current is not None and table.current.title == "s030"
        assert len(table.sessions) == 130
        await pilot.press("end")
        await settle(pilot)
        assert table.current is not None and table.current.title == "s000"
        await pilot.press("home")
        await settle(pilot)
        assert table.current is not None and table.current.title == "s129"
