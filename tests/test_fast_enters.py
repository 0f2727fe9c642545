"""Lines entered faster than the chat handles them (a paste without bracketed paste, a
fast typist): each one reaches the model once, in the order typed, and the prompt is
empty afterwards — whether a run, a queue write or nothing was in flight."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from tests.support.tui import SIZE, chat_records, make_app, settle, wait_for, write_session

LINES = [f"R{n}" for n in range(1, 7)]


def burst(app: Any, lines: list[str]) -> None:
    """Post ``lines`` each followed by enter, the way a terminal hands keys over."""
    for line in lines:
        for char in line:
            app.post_message(events.Key(char, char))
        app.post_message(events.Key("enter", "\r"))


def user_texts(service: SessionService, sid: str) -> list[str]:
    return [m.content for m in service.history(sid).messages if m.role == "user"]


def _done(chat: ChatScreen, service: SessionService, sid: str | None, count: int) -> bool:
    if sid is None or chat.state != "idle" or chat.lane.rows:
        return False
    return len(user_texts(service, sid)) >= count


@pytest.mark.parametrize("rounds", range(3))
async def test_lines_entered_in_a_burst_arrive_once_in_order(
    service: SessionService, rounds: int,
) -> None:
    sid = write_session(service, "Talk", chat_records(4))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        chat.query_one(PromptArea).focus()
        await pilot.pause()
        before = user_texts(service, sid)
        burst(app, LINES)
        await wait_for(pilot, lambda: _done(chat, service, sid, len(before) + len(LINES)))
        await settle(pilot)
        await pilot.pause(0.3)  # a late duplicate would have been written by now
        assert user_texts(service, sid) == [*before, *LINES]
        assert chat.query_one(PromptArea).text == ""


@pytest.mark.parametrize("rounds", range(3))
async def test_lines_entered_in_a_burst_on_a_new_chat_arrive_once_in_order(
    service: SessionService, rounds: int,
) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        chat.query_one(PromptArea).focus()
        await pilot.pause()
        burst(app, LINES)
        await wait_for(pilot, lambda: _done(chat, service, chat.chat.session_id, len(LINES)))
        await settle(pilot)
        await pilot.pause(0.3)
        sid = chat.chat.session_id
        assert sid is not None
        assert user_texts(service, sid) == LINES
        assert chat.query_one(PromptArea).text == ""
