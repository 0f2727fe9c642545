"""Keys typed faster than the chat handles an Enter (a burst, or a busy machine): the
text typed after the Enter is kept for the next message, and a message entered while a
new chat is still creating its session is queued for it, not refused."""

from __future__ import annotations

from textual import events

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from tests.support.tui import SIZE, kinds, make_app, wait_for


def burst(app, text: str) -> None:
    """Post ``text`` ("\\n" = enter) the way a terminal hands keys over: no waiting."""
    for char in text:
        key = "enter" if char == "\n" else char
        app.post_message(events.Key(key, "\r" if char == "\n" else char))


def user_texts(service: SessionService) -> list[str]:
    [info] = service.list_sessions().sessions
    return [r["message"]["content"] for r in service.records(info.id)[0]  # a queued one:
            if r["type"] in ("transcript_message", "pending_take")  # taken from the queue
            and r["message"].get("role") == "user"]


async def new_chat(pilot) -> ChatScreen:
    """The app's new chat (as `mttui` in a new project), its prompt focused."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChatScreen))
    chat = pilot.app.screen
    chat.query_one(PromptArea).focus()
    await pilot.pause()
    return chat


async def test_a_second_message_in_a_burst_is_queued_for_the_new_session(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = await new_chat(pilot)
        burst(app, "first\nsecond\n")
        await wait_for(pilot, lambda: len(service.list_sessions().sessions) == 1
                       and user_texts(service) == ["first", "second"]
                       and kinds(service, service.list_sessions().sessions[0].id)[-1] == "run_end"
                       and chat.state == "idle")
        assert chat.query_one(PromptArea).text == ""
        assert "cannot be written" not in str(app._notifications)


async def test_text_typed_right_after_enter_stays_in_the_prompt(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = await new_chat(pilot)
        prompt = chat.query_one(PromptArea)
        burst(app, "first\nstill typing")
        await wait_for(pilot, lambda: len(service.list_sessions().sessions) == 1
                       and chat.state == "idle" and chat.chat.handle is not None)
        assert prompt.text == "still typing"
    assert user_texts(service) == ["first"]
