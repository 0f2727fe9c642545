"""Slash commands and completion in the chat (Pilot + SVG snapshots): the ``/`` list,
the ``@`` file list (``.gitignore`` honoured), ``/clear`` and its divider, ``/model``,
the status bar's context left and cost, an ``@file`` refusal that keeps the text."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.completion import CompletionList
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from tests.support.clock import FrozenClock
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, make_app, msg, send, session_records, settle, wait_for
from tests.support.tui import write_session as write


def _files(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("build/\n")
    for rel in ("src/parser.py", "src/lexer.py", "tests/test_parser.py", "README.md",
                "build/parser_generated.py"):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")


def _cleared_session(service: SessionService) -> str:
    return write(service, "Start over", [
        msg("user", "Plan the parser rewrite.", 1),
        msg("assistant", "First the lexer, then the grammar.", 2,
            usage={"input_tokens": 1200, "output_tokens": 80}),
        ("run_end", {"run_id": "r1", "status": "completed",
                     "usage": {"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0042}}),
        ("session_clear", {"thread_id": "thread-2"}),
        ("session_update", {"thread_id": "thread-2"}),
        msg("user", "Forget that: write the README first.", 3),
        msg("assistant", "Here is a README outline.", 4,
            usage={"input_tokens": 96_000, "output_tokens": 500}),
        ("run_end", {"run_id": "r2", "status": "completed",
                     "usage": {"input_tokens": 96_000, "output_tokens": 500,
                               "cost_usd": 0.1458}}),
    ])  # fmt: skip


async def _type(pilot: Any, *keys: str) -> None:
    pilot.app.screen.query_one(PromptArea).focus()
    await pilot.press(*keys)
    await settle(pilot)


def test_slash_list_snapshot(snap_compare: Any, service: SessionService,
                             frozen: FrozenClock) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await _type(pilot, "slash")
        await quiet(pilot)

    assert snap_compare(make_app(service, open_browser=False), terminal_size=SIZE,
                        run_before=run_before)


def test_file_list_snapshot(snap_compare: Any, service: SessionService, project: Path,
                            frozen: FrozenClock) -> None:
    _files(project)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await _type(pilot, *"see ", "at", *"par")
        await quiet(pilot)

    assert snap_compare(make_app(service, open_browser=False), terminal_size=SIZE,
                        run_before=run_before)


def test_cleared_divider_and_status_snapshot(snap_compare: Any, service: SessionService,
                                             frozen: FrozenClock) -> None:
    sid = _cleared_session(service)

    async def run_before(pilot: Any) -> None:
        await settle(pilot, 8)
        await quiet(pilot)

    assert snap_compare(make_app(service, open_session=sid), terminal_size=SIZE,
                        run_before=run_before)


async def test_completion_keys(service: SessionService, project: Path) -> None:
    _files(project)
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lst = app.screen.query_one(CompletionList)
        prompt = app.screen.query_one(PromptArea)
        await _type(pilot, "slash", "m")
        assert lst.shown and lst.values == ["/model ", "/mcp "]
        await pilot.press("tab")
        assert prompt.text == "/model " and not lst.shown
        prompt.text = ""
        await _type(pilot, *"look at ", "at", *"lex")
        await wait_for(pilot, lambda: lst.shown)
        assert lst.values[0] == "@src/lexer.py "
        await pilot.press("enter")  # completes, does not send
        assert prompt.text == "look at @src/lexer.py " and not lst.shown
        prompt.text = ""
        await _type(pilot, "at", *"parser_gen")
        await settle(pilot)
        assert "@build/parser_generated.py " not in lst.values  # ignored by .gitignore
        await pilot.press("escape")
        assert not lst.shown and prompt.text == "@parser_gen"


async def test_clear_model_and_refusal_in_the_chat(service: SessionService,
                                                   project: Path) -> None:
    (project / "notes.txt").write_text("n")
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await send(pilot, "hello there")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.chat.session_id is not None)
        await settle(pilot)
        sid = str(chat.chat.session_id)
        await send(pilot, "/clear")
        await wait_for(pilot, lambda: bool(session_records(service, sid, "session_clear")))
        await settle(pilot)
        assert any(it.kind == "cleared" for it in chat.query_one(HistoryView).items)
        await send(pilot, "/permissions revoke shell")  # refused: the text comes back
        await wait_for(pilot, lambda: chat.query_one(PromptArea).text
                       == "/permissions revoke shell")
        chat.query_one(PromptArea).text = ""
        await send(pilot, "/model other-model")
        await wait_for(pilot, lambda: chat.query_one(StatusBar).model == "other-model")
        assert service.get(sid).chosen_model == "other-model"
        prompt = chat.query_one(PromptArea)
        await send(pilot, "read @../secret.txt")
        await settle(pilot)
        assert prompt.text == "read @../secret.txt"  # refused: nothing lost, nothing sent
        assert not [r for r in session_records(service, sid, "transcript_message")
                    if "secret" in str(r["message"].get("content"))]
        prompt.text = ""
        await send(pilot, "/nope")
        await settle(pilot)
        assert prompt.text == ""  # said, then cleared: the next text is not glued to it
        assert len(session_records(service, sid, "transcript_message")) == 2


async def test_status_shows_context_left_and_cost(service: SessionService) -> None:
    sid = _cleared_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 8)
        status = app.screen.query_one(StatusBar)
        assert status.context_left == 25  # 96 000 of 128 000 used
        assert status.cost == "$0.1500"


async def test_help_command_opens_the_help_with_the_commands(service: SessionService) -> None:
    from mttui.screens.help import HelpScreen
    from tests.support.tui import screen_text

    app = make_app(service, open_browser=False)
    async with app.run_test(size=(110, 140)) as pilot:
        await settle(pilot)
        await send(pilot, "/help")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "Slash commands" in text and "/clear" in text and "/usage" in text


async def test_the_loaded_agents_md_files_show_under_the_header(
        service: SessionService, project: Path) -> None:
    from textual.widgets import Static

    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = app.screen.query_one("#instructions-line", Static)
        assert not line.display  # no AGENTS.md: no line
    (project / "AGENTS.md").write_text("Use tabs.\n")
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = app.screen.query_one("#instructions-line", Static)
        assert line.display and "instructions loaded: AGENTS.md" in str(line.render())


async def test_a_reopened_session_shows_its_chosen_model(service: SessionService) -> None:
    sid = write(service, "Chosen", [msg("user", "hi", 1),
                                    ("session_update", {"model": "picked", "chosen": True})])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        assert app.screen.query_one(StatusBar).model == "picked"


async def test_enter_after_fast_typing_sends_the_text_not_a_stale_choice(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lst = app.screen.query_one(CompletionList)
        prompt = app.screen.query_one(PromptArea)
        await _type(pilot, "slash", *"mo")
        assert lst.shown
        prompt.insert("del foo")  # typed on before the list caught up
        assert lst.take_key("enter") is False and not lst.shown
        assert prompt.text == "/model foo"
