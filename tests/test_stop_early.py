"""Esc pressed after enter, before the run has begun (the session still being made,
opened or resumed; a first send loads LangGraph for ~2 s) stops it: a run forgets the
stops asked before it began, and a new chat had nothing to stop yet."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mttui.core.chat_session import ChatSession
from mttui.core.handle import SessionHandle
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, slow
from tests.support.tui import (
    SIZE,
    make_app,
    msg,
    notes_of,
    session_records,
    settings,
    settle,
    type_and,
    wait_for,
    write_session,
)

ANSWER = " ".join(f"word{i}" for i in range(200))


def _gate(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> threading.Event:
    """``cls.name`` waits for the returned event first (a slow start, made visible)."""
    gate = threading.Event()
    real = getattr(cls, name)

    def gated(self: Any, *args: Any, **kw: Any) -> Any:
        assert gate.wait(30)
        return real(self, *args, **kw)

    monkeypatch.setattr(cls, name, gated)
    return gate


def _app(service: SessionService, fake_openai: FakeOpenAI, **kw: Any) -> Any:
    fake_openai.add(slow(ANSWER, delay=0.05, pieces=100))
    return make_app(service, settings=settings(provider="openai", model="m", api_key="k",
                                               base_url=fake_openai.url), **kw)  # fmt: skip


async def test_escape_while_a_new_chat_is_made_sends_nothing_and_gives_the_text_back(
    service: SessionService, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = _gate(monkeypatch, ChatSession, "create")
    app = _app(service, fake_openai, open_browser=False)
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await type_and(pilot, "never mind", "enter")
        assert chat.state == "starting"
        await pilot.press("escape")
        gate.set()
        await wait_for(pilot, lambda: chat.state == "idle" and chat.chat.handle is not None)
        await settle(pilot)
        assert chat.query_one("#prompt").text == "never mind"  # type: ignore[attr-defined]
        assert any("stopped before it was sent" in text for _, text in said), said
        sid = chat.chat.session_id
        assert sid is not None
        assert session_records(service, sid, "run_start") == []
        assert fake_openai.requests == []  # no model call
        await pilot.press("ctrl+o")  # the chat left: a session nothing was said in goes
        await wait_for(pilot, lambda: sid not in {s.id for s in service.list_sessions(
            fresh=True).sessions})  # fmt: skip


async def test_a_new_chat_stopped_before_sending_and_then_sent_keeps_its_session(
    service: SessionService, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = _gate(monkeypatch, ChatSession, "create")
    app = _app(service, fake_openai, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await type_and(pilot, "first try", "enter")
        await pilot.press("escape")
        gate.set()
        await wait_for(pilot, lambda: chat.state == "idle" and chat.chat.handle is not None)
        await settle(pilot)
        await pilot.press("enter")  # the text given back, sent this time
        await wait_for(pilot, lambda: len(fake_openai.requests) == 1)
        await wait_for(pilot, lambda: chat.state == "idle")
        sid = chat.chat.session_id
    assert sid is not None
    [info] = [s for s in service.list_sessions(fresh=True).sessions if s.id == sid]
    assert info.message_count == 2


async def test_escape_before_the_run_of_an_opened_session_begins_stops_it(
    service: SessionService, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = write_session(service, "Earlier", [msg("user", "hi", 1), msg("assistant", "hello", 2)])
    gate = _gate(monkeypatch, SessionHandle, "run")  # opened and resumed; the run not begun
    app = _app(service, fake_openai, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await type_and(pilot, "go on", "enter")
        await wait_for(pilot, lambda: chat.chat.handle is not None)
        await pilot.press("escape")
        gate.set()

        def ended() -> list[str]:
            return [r["status"] for r in session_records(service, sid, "run_end")]

        await wait_for(pilot, lambda: ended() != [] and chat.state == "idle")
        assert ended() == ["stopped"]
        replies = [r for r in session_records(service, sid, "transcript_message")
                   if r["message"]["role"] == "assistant"]  # fmt: skip
        assert len(replies) == 1 or len(str(replies[-1]["message"]["content"])) < len(ANSWER)
