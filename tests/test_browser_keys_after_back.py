"""Keys pressed right after ``ctrl+o`` (back from a chat) move the browser's cursor;
none is lost while the chat closes or the list reloads."""

from __future__ import annotations

import threading
from typing import Any

from textual import events

from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import make_app, msg, send, settle, wait_for, write_session


def _sessions(service: SessionService) -> list[str]:
    return [write_session(service, f"Session {n}", [msg("user", f"hello {n}", 1)])
            for n in range(6)]


async def _back_and_down_twice(app: Any, pilot: Any) -> tuple[SessionTable, list[str]]:
    """``ctrl+o`` and two downs typed at once in a chat; the browser's table and its
    session ids once the keys were replayed after the first page."""
    for key in ("ctrl+o", "down", "down"):  # as a terminal sends them: no waiting
        app.post_message(events.Key(key, None))
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen)
                   and not app.screen.fetching)
    await pilot.pause(0.1)  # the keys replayed after the first page
    await settle(pilot)
    table = app.screen.query_one(SessionTable)
    return table, [s.id for s in table.sessions]


async def _browser(app: Any, pilot: Any) -> tuple[BrowserScreen, SessionTable]:
    await settle(pilot)
    browser = app.screen
    assert isinstance(browser, BrowserScreen)
    return browser, browser.query_one(SessionTable)


async def test_down_right_after_ctrl_o_moves_the_cursor(service: SessionService) -> None:
    _sessions(service)
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await pilot.press("down")
        await settle(pilot)
        opened = table.current_id
        assert table.cursor_row == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await settle(pilot)
        table, ids = await _back_and_down_twice(app, pilot)
        assert table.current_id == ids[ids.index(opened) + 2], (ids, opened, table.cursor_row)


async def test_keys_typed_while_the_list_reloads_apply_to_the_new_rows(
        service: SessionService) -> None:
    _sessions(service)
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        browser, table = await _browser(app, pilot)
        table.set_sessions([], reset=True, more=False)  # a reload that has not arrived
        browser.reload()
        await pilot.press("down", "down", "down")
        await wait_for(pilot, lambda: not browser.fetching and len(table.sessions) == 6)
        await settle(pilot)
        assert table.cursor_row == 3


async def test_row_keys_typed_before_a_slow_reload_has_rows_wait_for_them(
        service: SessionService, monkeypatch: Any) -> None:
    """The reload's first page is held back until the keys were handled: before, the
    moves hit an empty table and were lost (a race the test above could lose too)."""
    _sessions(service)
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        browser, table = await _browser(app, pilot)
        gate = threading.Event()
        real = service.list_sessions

        def slow(*args: Any, **kwargs: Any) -> Any:
            gate.wait(10)
            return real(*args, **kwargs)

        monkeypatch.setattr(service, "list_sessions", slow)
        table.set_sessions([], reset=True, more=False)
        browser.reload()
        await pilot.press("down", "j", "down")
        assert table.cursor_row == 0 and not table.sessions  # nothing to move yet
        gate.set()
        await wait_for(pilot, lambda: len(table.sessions) == 6 and table.cursor_row == 3)
        assert table.cursor_row == 3


async def test_keys_after_ctrl_o_move_from_the_session_in_its_new_place(
        service: SessionService) -> None:
    """The chat moved its session to the top (a message was sent): the keys typed with
    ``ctrl+o`` start from there, not from where the session stood before."""
    _sessions(service)
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await pilot.press("down", "down", "down")
        await settle(pilot)
        opened = table.current_id
        assert table.cursor_row == 3
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await settle(pilot)
        await send(pilot, "one more")
        await wait_for(pilot, lambda: app.screen.state == "idle"
                       and "one more" in [m.content for m in service.history(opened).messages])
        table, ids = await _back_and_down_twice(app, pilot)
        assert ids[0] == opened  # the latest activity is first
        assert table.current_id == ids[2]
