"""``mttui`` then ``j j enter`` typed at once: keys typed before the app switched the
terminal to raw mode were read by the terminal as a line, its CR turned into a LF,
which the app reads as ctrl+j. The browser opens the row the keys reached all the same."""

from __future__ import annotations

from textual import events

from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import make_app, msg, settle, wait_for, write_session


async def test_j_j_and_a_newline_open_the_third_row(service: SessionService) -> None:
    for n in range(5):
        write_session(service, f"Session {n}", [msg("user", f"hello {n}", 1)])
    app = make_app(service)
    async with app.run_test(size=(110, 34)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen)
                       and app.screen.query_one(SessionTable).row_count == 5)
        third = app.screen.query_one(SessionTable).sessions[2].id
        for key in ("j", "j", "ctrl+j"):  # as the terminal hands over "jj\n": no waiting
            app.post_message(events.Key(key, "\n" if key == "ctrl+j" else key))
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        assert chat.session_id == third
