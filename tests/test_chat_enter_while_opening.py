"""Enter pressed while a chat is still opening is sent once it is open, not dropped."""

from __future__ import annotations

import threading

import pytest

from mttui.core.chat_session import ChatSession
from mttui.graph.runner import Runner
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from tests.support.tui import SIZE, kinds, make_app, screen_text, settings, wait_for


def _session(service: SessionService) -> str:
    writer = service.create_session(provider="offline", model="offline", title="Slow open")
    runner = Runner.for_service(service, writer, settings())
    list(runner.run("hello"))
    runner.close()
    writer.close()
    return writer.session_id


def _slow_open(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold the open worker in ``ChatSession.load`` until the event is set."""
    go = threading.Event()
    load = ChatSession.load

    def held(self, session_id):
        go.wait(30)
        return load(self, session_id)

    monkeypatch.setattr(ChatSession, "load", held)
    return go


def _user_texts(service: SessionService, sid: str) -> list[str]:
    return [r["message"]["content"] for r in service.records(sid)[0]
            if r["type"] == "transcript_message" and r["message"].get("role") == "user"]


async def test_enter_while_opening_sends_once_open(service, monkeypatch) -> None:
    sid = _session(service)
    go = _slow_open(monkeypatch)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        assert chat.state == "opening"
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "typed before it opened"
        await pilot.press("enter")
        await pilot.pause()
        assert chat.state == "opening"
        assert prompt.text == "typed before it opened"  # kept, not sent into nothing
        assert chat.query_one(StatusBar).note == "sends when the session is open"
        assert "a run is active" not in screen_text(app)
        go.set()
        await wait_for(pilot, lambda: chat.state == "idle" and chat.chat.handle is not None
                       and kinds(service, sid)[-1] == "run_end")
        assert prompt.text == ""
    assert _user_texts(service, sid) == ["hello", "typed before it opened"]


async def test_text_changed_while_opening_is_not_sent(service, monkeypatch) -> None:
    sid = _session(service)
    go = _slow_open(monkeypatch)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "first draft"
        await pilot.press("enter")
        await pilot.press("!")  # typed on: the user is still writing, nothing is sent
        go.set()
        await wait_for(pilot, lambda: chat.state == "idle")
        await pilot.pause(0.2)
        assert "first draft" in prompt.text
        assert chat.query_one(StatusBar).note != "sends when the session is open"
    assert _user_texts(service, sid) == ["hello"]


async def test_escape_takes_back_an_enter_pressed_while_opening(service, monkeypatch) -> None:
    sid = _session(service)
    go = _slow_open(monkeypatch)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "changed my mind"
        await pilot.press("enter")
        await pilot.press("escape")
        assert chat.query_one(StatusBar).note == "not sent: press enter again to send"
        go.set()
        await wait_for(pilot, lambda: chat.state == "idle")
        await pilot.pause(0.2)
        assert prompt.text == "changed my mind"
    assert _user_texts(service, sid) == ["hello"]


async def test_leaving_while_opening_sends_nothing(service, monkeypatch) -> None:
    sid = _session(service)
    go = _slow_open(monkeypatch)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "left before it opened"
        await pilot.press("enter")
        threading.Timer(0.3, go.set).start()  # the open ends while the chat closes
        await pilot.press("ctrl+o")  # back to the sessions (waits for the open)
        await wait_for(pilot, lambda: not isinstance(app.screen, ChatScreen))
        await pilot.pause(0.5)
    assert _user_texts(service, sid) == ["hello"]
