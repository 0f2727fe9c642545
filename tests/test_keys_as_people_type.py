"""Keys as people type them: a click in the history never turns the next letters into
commands (fork, settle a call); those need a modifier. ``ctrl+c`` during a run stops
it and keeps the app open. ``/resume`` opens the session picker; an unknown command
leaves the prompt empty after its notice."""

from __future__ import annotations

from typing import Any

from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.history_items import Item
from mttui.widgets.prompt import PromptArea
from tests.support.logs import records
from tests.support.tui import (
    SIZE,
    WAIT_FOR_GO,
    chat_records,
    killed_call_session,
    make_app,
    notes_of,
    select_killed_call,
    session_records,
    settings,
    settle,
    type_and,
    wait_for,
    write_session,
)


async def _click(pilot: Any, view: HistoryView, item: Item) -> None:
    """A mouse click on the first line of ``item`` as the history shows it."""
    y = view.offset_of(item) - int(view.scroll_y)
    assert 0 < y < view.scrollable_content_region.height, y
    await pilot.click(HistoryView, offset=(6, y))
    await pilot.pause()


def _resolutions(service: SessionService, sid: str) -> list[dict[str, Any]]:
    return [r for r in records(service.get(sid).path) if r["type"] == "tool_resolution"]


async def test_a_sentence_typed_after_clicking_a_user_row_is_typed(
    service: SessionService,
) -> None:
    sid = write_session(service, "Talk", chat_records(8))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        view = chat.query_one(HistoryView)
        user = view.find(lambda i: i.kind == "user" and i.seq == 5)
        assert user is not None
        await _click(pilot, view, user)
        assert view.has_focus and view.selected is user  # the click selected it
        await pilot.press(*"fix the bug")
        await settle(pilot)
        prompt = chat.query_one("#prompt", PromptArea)
        assert app.screen is chat and prompt.has_focus
        assert prompt.text == "fix the bug"
    assert [s.id for s in service.list_sessions().sessions] == [sid]  # nothing forked


async def test_a_sentence_typed_after_clicking_a_tool_row_writes_no_resolution(
    service: SessionService,
) -> None:
    sid = killed_call_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        view = chat.query_one(HistoryView)
        call = view.find(lambda i: i.call_id == "k1")
        assert call is not None
        await _click(pilot, view, call)
        assert view.selected is call
        await pilot.press(*"done? typed after click")
        await settle(pilot)
        assert chat.query_one("#prompt", PromptArea).text == "done? typed after click"
        assert chat.state == "idle"  # nothing re-run
    assert _resolutions(service, sid) == []
    assert [s.id for s in service.list_sessions().sessions] == [sid]


async def test_a_space_after_a_click_is_typed_too(service: SessionService) -> None:
    sid = killed_call_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        view, _ = await select_killed_call(app, pilot)
        await pilot.press("space", "x")
        await settle(pilot)
        assert app.screen.query_one("#prompt", PromptArea).text == " x"
    assert _resolutions(service, sid) == []


async def test_the_ledger_actions_take_a_modifier(service: SessionService) -> None:
    sid = killed_call_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await select_killed_call(app, pilot)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: bool(_resolutions(service, sid)))
        await settle(pilot)
        assert app.screen.query_one("#prompt", PromptArea).text == ""
    assert [(r["call_id"], r["resolution"]) for r in _resolutions(service, sid)] == [
        ("k1", "done")]


async def test_fork_of_a_selected_message_takes_a_modifier(service: SessionService) -> None:
    sid = write_session(service, "Talk", chat_records(8))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        user = view.find(lambda i: i.kind == "user" and i.seq == 5)
        assert user is not None
        view.focus()
        view.select(user)
        await pilot.press("alt+n")
        await wait_for(pilot, lambda: len(service.list_sessions().sessions) == 2)
        await settle(pilot)
    forks = [s for s in service.list_sessions().sessions if s.id != sid]
    assert forks[0].forked_from() == {"session_id": sid, "seq": 5}


async def test_ctrl_c_during_a_run_stops_it_and_keeps_the_app(
    service: SessionService, project: Any,
) -> None:
    app = make_app(service, open_browser=False, settings=settings(approval="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await type_and(pilot, WAIT_FOR_GO, "enter")
        await wait_for(pilot, lambda: chat.chat.writer is not None and b'"tool_dispatch"'
                       in chat.chat.writer.path.read_bytes())  # fmt: skip
        await pilot.press("ctrl+c")
        sid = chat.chat.session_id
        await wait_for(pilot, lambda: [r["status"] for r in session_records(
            service, sid, "run_end")] == ["stopped"] and chat.state == "idle")
        await settle(pilot)
        assert app.is_running and app.screen is chat
        assert not (project / "go").exists()
        # idle again: ctrl+c clears a typed prompt, and twice on an empty one quits
        prompt = chat.query_one("#prompt", PromptArea)
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        assert prompt.text == "" and app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # armed only
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running)


async def test_resume_opens_the_session_picker(service: SessionService) -> None:
    sid = write_session(service, "Talk", chat_records(4))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        await type_and(pilot, "/resume", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await settle(pilot)
    assert session_records(service, sid, "transcript_message")[-1]["message"]["content"] \
        != "/resume"


async def test_an_unknown_command_is_cleared_after_its_notice(service: SessionService) -> None:
    sid = write_session(service, "Talk", chat_records(4))
    app = make_app(service, open_session=sid)
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await type_and(pilot, "/nosuch", "enter")
        await settle(pilot)
        assert any("unknown command /nosuch" in m for _, m in said), said
        prompt = chat.query_one("#prompt", PromptArea)
        assert prompt.text == ""
        await pilot.press("up")  # not lost: the prompt history has it
        assert prompt.text == "/nosuch"
    assert len(session_records(service, sid, "transcript_message")) == 4


def test_resume_is_a_command_of_every_face(service: SessionService) -> None:
    """``/resume`` is known (``exec`` says where the picker is) and takes no argument."""
    import pytest

    from mttui.core.slash import SlashContext, SlashError, parse, run_command

    ctx = SlashContext(service, settings(), None, lambda: None)
    parsed = parse("/resume")
    assert parsed is not None
    outcome = run_command(parsed, ctx)
    assert outcome.action == "resume" and "mttui --resume" in outcome.text
    again = parse("/resume abc")
    assert again is not None
    with pytest.raises(SlashError):
        run_command(again, ctx)
