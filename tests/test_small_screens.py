"""80×24: the chat footer keeps Sessions and Help; the palette lists Quit once; the
help lists the pending lane's keys and /compact."""

from __future__ import annotations

from rich.console import Console
from textual.widgets import Static

from mttui.screens.chat import ChatScreen
from mttui.screens.help import HelpScreen
from mttui.session.service import SessionService
from tests.support.tui import make_app, screen_text, settle


async def test_chat_footer_at_80x24(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        footer = screen_text(app).splitlines()[-1]
        assert "Sessions" in footer and "Help" in footer


async def test_palette_lists_quit_once(service: SessionService) -> None:
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Quit") == 1


async def test_help_lists_lane_keys_and_compact(service: SessionService) -> None:
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=100, record=True)
        console.print(app.screen.query_one("#help-body", Static).content)
        plain = console.export_text()
        assert "Pending lane" in plain and "pending.move_up" in plain
        assert "/compact [instructions]" in plain


async def test_browser_status_column_fits_at_80(service: SessionService) -> None:
    from tests.support.tui import msg, write_session

    write_session(service, "Waiting", [msg("user", "hello", 1)])
    app = make_app(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = screen_text(app).splitlines()[1]
        assert "Status" in header and "Model" not in header


async def test_a_narrow_browser_keeps_the_status_and_drops_columns_in_turn(
    service: SessionService,
) -> None:
    from tests.support.tui import msg, write_session

    write_session(service, "Waiting", [msg("user", "hello", 1)])
    app = make_app(service)
    seen: dict[int, str] = {}
    async with app.run_test(size=(80, 24)) as pilot:
        for width in (80, 64, 63, 44, 36):
            await pilot.resize_terminal(width, 24)
            await settle(pilot)
            header = screen_text(app).splitlines()[1]
            seen[width] = header
            assert "Status" in header and "Title" in header, (width, header)
    # the preview (its title on this line) beside the list down to 64 columns, then
    # the list alone; its columns dropped in turn, the Status kept
    assert "Waiting" in seen[64] and "Msgs" not in seen[64] and "Updated" in seen[64]
    assert "Waiting" not in seen[63] and "Msgs" in seen[63]
    assert "Msgs" not in seen[44] and "Updated" in seen[44]
    assert "Updated" not in seen[36]
