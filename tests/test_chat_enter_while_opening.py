"""Enter pressed while a chat is still opening is sent once it is open, not dropped;
escape takes it back, and leaving the chat meanwhile sends nothing."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from mttui.core.chat_session import ChatSession
from mttui.graph.runner import Runner
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from tests.support.tui import SIZE, kinds, make_app, screen_text, settings, wait_for

HELD = "sends when the session is open"


@dataclass
class Opening:
    sid: str
    go: threading.Event  # set: the open goes on
    pilot: Any
    chat: ChatScreen
    prompt: PromptArea

    @property
    def note(self) -> str:
        return self.chat.query_one(StatusBar).note


@asynccontextmanager
async def entered_while_opening(service: SessionService, monkeypatch: pytest.MonkeyPatch,
                                text: str) -> AsyncIterator[Opening]:
    """A chat held in its open (``ChatSession.load`` waits), ``text`` typed and entered."""
    writer = service.create_session(provider="offline", model="offline", title="Slow open")
    runner = Runner.for_service(service, writer, settings())
    list(runner.run("hello"))
    runner.close()
    writer.close()
    go = threading.Event()
    load = ChatSession.load

    def held(self, session_id):
        go.wait(30)
        return load(self, session_id)

    monkeypatch.setattr(ChatSession, "load", held)
    app = make_app(service, open_session=writer.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        assert isinstance(chat, ChatScreen) and chat.state == "opening"
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = text
        await pilot.press("enter")
        yield Opening(writer.session_id, go, pilot, chat, prompt)


def user_texts(service: SessionService, sid: str) -> list[str]:
    return [r["message"]["content"] for r in service.records(sid)[0]
            if r["type"] == "transcript_message" and r["message"].get("role") == "user"]


async def test_enter_while_opening_sends_once_open(service, monkeypatch) -> None:
    async with entered_while_opening(service, monkeypatch, "typed before it opened") as o:
        await o.pilot.pause()
        assert o.chat.state == "opening"
        assert o.prompt.text == "typed before it opened"  # kept, not sent into nothing
        assert o.note == HELD
        assert "a run is active" not in screen_text(o.pilot.app)
        o.go.set()
        await wait_for(o.pilot, lambda: o.chat.state == "idle" and o.chat.chat.handle
                       is not None and kinds(service, o.sid)[-1] == "run_end")
        assert o.prompt.text == ""
    assert user_texts(service, o.sid) == ["hello", "typed before it opened"]


async def test_text_changed_while_opening_is_not_sent(service, monkeypatch) -> None:
    async with entered_while_opening(service, monkeypatch, "first draft") as o:
        await o.pilot.press("!")  # typed on: the user is still writing, nothing is sent
        o.go.set()
        await wait_for(o.pilot, lambda: o.chat.state == "idle")
        await o.pilot.pause(0.2)
        assert "first draft" in o.prompt.text
        assert o.note != HELD
    assert user_texts(service, o.sid) == ["hello"]


async def test_escape_takes_back_an_enter_pressed_while_opening(service, monkeypatch) -> None:
    async with entered_while_opening(service, monkeypatch, "changed my mind") as o:
        await o.pilot.press("escape")
        assert o.note == "not sent: press enter again to send"
        o.go.set()
        await wait_for(o.pilot, lambda: o.chat.state == "idle")
        await o.pilot.pause(0.2)
        assert o.prompt.text == "changed my mind"
    assert user_texts(service, o.sid) == ["hello"]


async def test_leaving_while_opening_sends_nothing(service, monkeypatch) -> None:
    async with entered_while_opening(service, monkeypatch, "left before it opened") as o:
        threading.Timer(0.3, o.go.set).start()  # the open ends while the chat closes
        await o.pilot.press("ctrl+o")  # back to the sessions (waits for the open)
        await wait_for(o.pilot, lambda: not isinstance(o.pilot.app.screen, ChatScreen))
        await o.pilot.pause(0.5)
    assert user_texts(service, o.sid) == ["hello"]
