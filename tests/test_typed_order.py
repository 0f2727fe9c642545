"""Keys read from the terminal in one chunk (typed while the app was busy, over a slow
connection) act in the order they were typed: backspace, ctrl+w and ctrl+u edit the
text typed before them, not the characters typed after them, in the chat's prompt and
in the dialogs' fields; enter takes the text as edited."""

from __future__ import annotations

from typing import Any

from textual import events

from mttui.screens.dialogs import RenameScreen
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from tests.support.tui import make_app, msg, session_records, settle, wait_for, write_session

KEYS = {"backspace": None, "ctrl+w": None, "ctrl+u": None, "enter": "\r"}


def burst(app: Any, typed: list[str]) -> None:
    """``typed`` (characters and key names) as a terminal hands them over: all at once."""
    for key in typed:
        if key in KEYS:
            app.post_message(events.Key(key, KEYS[key]))
        else:
            app.post_message(events.Key(key if key.isalnum() else "space", key))


async def test_the_prompt_edits_in_typing_order(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.focused, PromptArea)
        burst(app, [*"abc", "backspace", "d", " ", *"two words", "ctrl+w", *"word",
                    "enter", *"next", "ctrl+u", *"kept"])
        chat = app.screen.chat
        await wait_for(pilot, lambda: chat.session_id is not None
                       and len(session_records(service, chat.session_id,
                                               "transcript_message")) >= 2)
        await settle(pilot)
        sent = [r["message"]["content"] for r in
                session_records(service, chat.session_id, "transcript_message")
                if r["message"]["role"] == "user"]
        assert sent == ["abd two word"]
        assert app.screen.query_one(PromptArea).text == "kept"


async def test_a_dialog_field_edits_in_typing_order(service: SessionService) -> None:
    write_session(service, "Old title", [msg("user", "hello", 1)])
    app = make_app(service)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RenameScreen))
        await settle(pilot)
        burst(app, ["ctrl+u", *"New", " ", *"titel", "backspace", "backspace", *"le",
                    "enter"])
        await wait_for(pilot, lambda: not isinstance(app.screen, RenameScreen))
        await wait_for(pilot, lambda: service.list_sessions().sessions[0].title == "New title")
