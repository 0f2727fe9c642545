"""Keys typed right after the key that opens a screen (``/`` then the query, as fast as
a terminal sends them) land in that screen instead of being lost on the way."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from textual import events
from textual.widgets import Input

from mttui.app import MttuiApp
from mttui.screens.search import SearchScreen
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.clock import FrozenClock
from tests.support.tui import SIZE, make_app, msg, wait_for, write_session


def _type(app: MttuiApp, keys: list[tuple[str, str | None]]) -> None:
    for key, character in keys:  # as a terminal's keys arrive: all queued at once
        app.post_message(events.Key(key, character))


async def test_query_typed_right_after_slash_lands_in_the_search_field(
        home: Path, project: Path) -> None:
    service = SessionService(home, project)
    write_session(service, "Something", [msg("user", "zephyr in a message", 1)])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one(SessionTable).row_count == 1)
        _type(app, [("slash", "/")] + [(c, c) for c in "zephyr"])
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen)
                       and app.screen.query_one(Input).value == "zephyr")
        assert app.screen.query_one(Input).value == "zephyr"
        _type(app, [("escape", None), ("j", "j")])  # back in the browser: keys act there
        await wait_for(pilot, lambda: not isinstance(app.screen, SearchScreen))
        await pilot.pause()
        assert app.screen.query_one(SessionTable).cursor_row == 0


async def test_enter_typed_after_moves_opens_the_row_they_reached(
        home: Path, project: Path, frozen: FrozenClock) -> None:
    """Enter is a priority key (handled before keys on their way to the list): ``j j
    enter`` typed at once still opens the third row, not the first."""
    from mttui.screens.chat import ChatScreen

    service = SessionService(home, project)
    for n in range(4):
        frozen.jump(timedelta(minutes=1))
        write_session(service, f"Session {n}", [msg("user", f"hello {n}", 1)])
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionTable)
        await wait_for(pilot, lambda: table.row_count == 4)
        third = table.sessions[2].id
        _type(app, [("j", "j"), ("j", "j"), ("enter", None)])
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert app.screen.session_id == third
