"""Compression in the chat screen (offline model): ``ctrl+k`` compacts, the history
shows one collapsed item that expands to the summary, the status bar counts it."""

from __future__ import annotations

import asyncio
from typing import Any

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from tests.support.tui import SIZE, make_app, msg, screen_text, settings, settle, write_session


async def _until(pilot: Any, condition: Any, limit: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not condition():
        assert loop.time() < end, "condition not reached"
        await pilot.pause(0.05)


async def _ask(pilot: Any, chat: ChatScreen, questions: list[str]) -> None:
    """Send each question and wait until its run has ended."""
    for question in questions:
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = question
        await pilot.press("enter")
        await _until(pilot, lambda: chat.state == "idle" and chat.chat.writer is not None)
        await settle(pilot)


async def test_ctrl_k_compacts_and_the_item_expands(service: SessionService) -> None:
    app = make_app(service, open_browser=False, settings=settings(auto_compress=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await _ask(pilot, chat, [f"question {i}: how does the parser handle token kinds of "
                                  f"width {i}?" for i in range(4)])
        status = chat.query_one(StatusBar)
        assert status.compressions == 0
        await pilot.press("ctrl+k")
        await settle(pilot)
        await pilot.press("y")  # ctrl+k asks first
        await _until(pilot, lambda: status.compressions == 1 and chat.state == "idle")
        await settle(pilot)
        sid = chat.chat.session_id
        assert sid is not None
        rec = [r for r in service.records(sid)[0] if r["type"] == "compression"]
        assert len(rec) == 1 and rec[0]["trigger"] == "manual"
        text = screen_text(app)
        assert f"compressed {rec[0]['removed_count']} messages — " in text
        assert "compressions 1" in text
        view = chat.query_one(HistoryView)
        item = view.find(lambda it: it.kind == "compression")
        assert item is not None and not item.expanded
        assert "Current goal" not in screen_text(app)  # collapsed: one line
        view.select(item)
        view.action_expand()
        await settle(pilot)
        view.scroll_to(y=view.max_scroll_y, animate=False, immediate=True, force=True)
        await settle(pilot)
        shown = screen_text(app)
        assert "Current goal" in shown and "<current_goal>" not in shown


async def test_slash_compact_on_an_opened_session(service: SessionService) -> None:
    """``/compact TEXT`` typed in the prompt, on a session opened from disk (no
    checkpoint: the resume rebuilds the thread first)."""
    records = []
    for i in range(1, 9, 2):
        records += [msg("user", f"question {i}: what about token kind {i}? " + "x" * 200, i),
                    msg("assistant", f"answer {i}: kind {i} has a fixed width. " + "y" * 200,
                        i + 1)]  # fmt: skip
    sid = write_session(service, "Old session", records)
    app = make_app(service, open_session=sid, settings=settings(auto_compress=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen) and chat.chat.runner is None  # nothing written yet
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "/compact keep the token kinds"
        await pilot.press("enter")
        status = chat.query_one(StatusBar)
        await _until(pilot, lambda: status.compressions == 1 and chat.state == "idle")
        await settle(pilot)
        assert prompt.text == ""
    rec = [r for r in service.records(sid)[0] if r["type"] == "compression"]
    assert len(rec) == 1 and rec[0]["trigger"] == "manual"
    users = [r["message"] for r in service.records(sid)[0]
             if r["type"] == "transcript_message" and r["message"]["role"] == "user"]
    assert len(users) == 4  # the command was not sent as a message


async def test_ctrl_k_edits_a_typed_prompt_and_asks_before_compacting(
        service: SessionService) -> None:
    """``ctrl+k`` is delete-to-end-of-line in a prompt with text; on an empty prompt it
    asks, and ``n`` (or escape) compacts nothing."""
    from mttui.screens.dialogs import ConfirmScreen

    app = make_app(service, open_browser=False, settings=settings(auto_compress=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await _ask(pilot, chat, [f"question {i}: tell me about token kinds of width {i}"
                                  for i in range(3)])
        prompt = chat.query_one(PromptArea)
        prompt.focus()
        prompt.text = "keep this, drop that"
        prompt.move_cursor((0, 9))
        await pilot.press("ctrl+k")
        await settle(pilot)
        assert prompt.text == "keep this" and app.screen is chat
        prompt.text = ""
        for no in ("n", "escape"):
            await pilot.press("ctrl+k")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press(no)
            await settle(pilot)
            assert app.screen is chat
        sid = chat.chat.session_id
        assert sid is not None and chat.query_one(StatusBar).compressions == 0
        assert not [r for r in service.records(sid)[0] if r["type"] == "compression"]
