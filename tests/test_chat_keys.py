"""The chat's everyday keys: prompt history, ctrl+c, typing into the history view,
the read-only prompt and footer."""

from __future__ import annotations

from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from mttui.widgets.prompt_history import PromptHistory
from tests.support.tui import SIZE, make_app, msg, screen_text, settle, write_session


def _session(service: SessionService) -> str:
    return write_session(service, "Three questions", [
        msg("user", "first question", 1), msg("assistant", "one", 2),
        msg("user", "second question", 3), msg("assistant", "two", 4),
        msg("user", "third question", 5), msg("assistant", "three", 6),
    ])


def test_prompt_history_walks_back_and_returns_the_draft() -> None:
    history = PromptHistory(["a", "b", "b"])
    assert history.texts == ["a", "b"]
    assert history.older("draft") == "b"
    assert history.older("b") == "a"
    assert history.older("a") is None
    assert history.newer() == "b"
    assert history.newer() == "draft"
    assert history.newer() is None


async def test_up_and_down_recall_the_sessions_prompts(service: SessionService) -> None:
    app = make_app(service, open_session=_session(service))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        prompt = app.screen.query_one("#prompt", PromptArea)
        prompt.focus()
        prompt.text = "half typed"
        await pilot.press("up")
        assert prompt.text == "third question"
        await pilot.press("up", "up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == "second question"
        await pilot.press("down", "down")
        assert prompt.text == "half typed"  # the draft is back, nothing lost


async def test_ctrl_c_clears_then_asks_before_quitting(service: SessionService) -> None:
    app = make_app(service, open_session=_session(service))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        prompt = app.screen.query_one("#prompt", PromptArea)
        prompt.focus()
        prompt.text = "something"
        await pilot.press("ctrl+c")
        assert prompt.text == ""
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert "Press ctrl+c again to quit" in [n.message for n in app._notifications]
        assert isinstance(app.screen, ChatScreen)
        await pilot.press("up")  # the cleared text is not lost
        assert prompt.text == "something"
        prompt.text = ""
        await pilot.press("ctrl+c")
        await pilot.pause(0.5)
    assert app.return_code == 0
    assert app.last_session is not None


async def test_typing_in_the_history_goes_to_the_prompt(service: SessionService) -> None:
    app = make_app(service, open_session=_session(service))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        app.screen.query_one(HistoryView).focus()
        await pilot.press("h", "i")
        prompt = app.screen.query_one("#prompt", PromptArea)
        assert prompt.has_focus and prompt.text == "hi"


async def test_read_only_says_so_in_the_prompt_and_footer(service: SessionService) -> None:
    sid = _session(service)
    with service.open_writer(sid):  # another writer holds the lock
        app = make_app(service, open_session=sid)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            chat = app.screen
            assert chat.state == "read-only"
            assert "Read-only: this session is open for writing" in \
                str(chat.query_one(PromptArea).placeholder)
            assert chat.check_action("stop", ()) is None
            assert chat.check_action("compact", ()) is None


async def test_a_new_chat_shows_a_hint_until_the_first_message(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "approval" in text and "/read P" in text and "f1 help" in text
        prompt = app.screen.query_one("#prompt", PromptArea)
        prompt.focus()
        prompt.text = "hello"
        await pilot.press("enter")
        await settle(pilot)
        assert "/read P" not in screen_text(app)


async def test_read_only_status_keeps_the_pid_at_80(service: SessionService) -> None:
    sid = _session(service)
    with service.open_writer(sid):
        app = make_app(service, open_session=sid)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            status = screen_text(app).splitlines()[-2]
            assert "read-only (open for writing in process" in status
