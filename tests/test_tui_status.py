"""The status bar of a reopened session shows what the log knows before any model call."""

from __future__ import annotations

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.status import StatusBar
from tests.support.tui import SIZE, make_app, msg, settle, write_session


async def test_reopened_session_shows_its_last_token_usage(service: SessionService,
                                                           frozen) -> None:
    sid = write_session(service, "Tokens", [
        msg("user", "first", 1),
        msg("assistant", "one", 2, usage={"input_tokens": 1000, "output_tokens": 200}),
        msg("user", "second", 3),
        msg("assistant", "two", 4, usage={"input_tokens": 5400, "output_tokens": 600}),
        msg("user", "a question that was never answered", 5),
    ])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        bar = app.screen.query_one(StatusBar)
        assert bar.used == 6000 and not bar.estimated
        assert "tokens 6.0k" in str(bar.render()) or "6k" in str(bar.render())
