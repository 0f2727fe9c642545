"""Help screen, key remapping from config ([keys] → Textual keymap), command palette."""

from __future__ import annotations

from mttui.app import MttuiApp
from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.screens.help import HelpScreen
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import SIZE, make_app, msg, screen_text, settings, settle, write_session


def all_bindings(app: MttuiApp):
    for _title, bindings in app.help_sections():
        yield from bindings


def test_every_binding_has_an_id_and_a_description(service: SessionService) -> None:
    app = make_app(service)
    ids = []
    for binding in all_bindings(app):
        assert binding.id, binding
        assert binding.description, binding
        ids.append(binding.id)
    assert len(ids) == len(set(ids)), "binding ids are unique"
    for wanted in ("open", "new_session", "search", "rename", "delete", "all_projects",
                   "quit", "stop", "compact", "search_session", "back", "help", "send"):
        assert wanted in ids


async def test_help_lists_bindings_by_screen_and_offline_triggers(
        service: SessionService) -> None:
    app = make_app(service)
    async with app.run_test(size=(110, 130)) as pilot:  # (the approval and lane keys grew)
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for title in ("Session browser", "Chat", "Search panel", "Approval"):
            assert title in text
        assert "Compact" in text and "^k" in text and "compact" in text
        assert "Offline model" in text and "/read PATH" in text
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)


async def test_keys_from_config_remap_bindings(service: SessionService) -> None:
    app = make_app(service, settings=settings(keys={"new_session": "ctrl+n",
                                                    "back": "ctrl+b"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")  # no longer bound
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("f1")
        await pilot.pause()
        assert "^n" in screen_text(app)


async def test_rebinding_the_list_keys_keeps_the_arrows(service: SessionService) -> None:
    for i in range(3):
        write_session(service, f"Session {i}", [msg("user", f"hello {i}", 1)])
    app = make_app(service, settings=settings(keys={"session_down": "s",
                                                    "session_up": "w"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await pilot.press("j")  # no longer bound
        assert table.cursor_row == 0
        await pilot.press("down", "down", "up")
        assert table.cursor_row == 1
        await pilot.press("w")
        assert table.cursor_row == 0
        await pilot.press("s", "s")
        assert table.cursor_row == 2


async def test_bindings_are_commands_of_the_palette(service: SessionService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"New", "Search", "Rename", "Delete", "All projects", "Help"} <= titles
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "New")
        await command.callback()
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Stop", "Compact", "Search", "Sessions", "Send"} <= titles
