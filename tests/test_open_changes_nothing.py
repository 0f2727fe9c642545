"""Opening a session to read it writes nothing: no record, no reordering of the list.

The resume is applied when the user first acts (sends, answers an approval, resumes
the queue); ``updated_at`` is the last conversation activity (a rename is not one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from mttui.graph.runner import Runner
from mttui.screens.approval import ApprovalPanel
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from tests.support.terminal import app_command, app_env, until
from tests.support.tui import (
    SIZE,
    kinds,
    make_app,
    msg,
    screen_text,
    send,
    settings,
    settle,
    wait_for,
    write_session,
)


def _interrupted(service: SessionService) -> str:
    return write_session(service, "Run the tests (interrupted)", [
        ("run_start", {"run_id": "run-1"}),
        msg("user", "!make test", 1),
        msg("assistant", "", 2, tool_calls=[{"id": "call_1", "name": "shell",
                                             "args": {"command": "make test"}}]),
        ("tool_dispatch", {"run_id": "run-1", "call_id": "call_1", "tool_name": "shell",
                           "arguments_sha256": "0" * 64}),
    ])


def _interrupted_then_another(service: SessionService) -> str:
    """The interrupted session, and a newer one above it in the list."""
    sid = _interrupted(service)
    time.sleep(0.01)
    write_session(service, "Newer", [msg("user", "hello", 1)])
    return sid


def _waiting_approval(service: SessionService) -> str:
    writer = service.create_session(provider="offline", model="offline", title="Waits")
    runner = Runner.for_service(service, writer, settings())
    try:
        list(runner.run("!echo approved > out.txt"))
        assert runner.pending_approval() is not None
    finally:
        runner.close()
        writer.close()
    return writer.session_id


def _state(service: SessionService, sid: str) -> tuple[bytes, str, list[str]]:
    """The log's bytes, ``updated_at`` and the order of the session list."""
    fresh = SessionService(service.layout.home, service.project)
    info = fresh.get(sid)
    order = [s.id for s in fresh.list_sessions().sessions]
    return Path(info.path).read_bytes(), info.updated_at, order


async def test_opening_an_interrupted_session_writes_nothing(
        service: SessionService) -> None:
    sid = _interrupted_then_another(service)
    before = _state(service, sid)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await wait_for(pilot, lambda: "tool_interrupted" in screen_text(app))
        text = screen_text(app)
        # plain words first, the code second; said before anything is written
        assert text.index("interrupted") < text.index("tool_interrupted")
        assert chat.chat.handle is None
    assert _state(service, sid) == before


async def test_the_resume_is_applied_when_the_user_sends(service: SessionService) -> None:
    sid = _interrupted(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        chat = app.screen
        await send(pilot, "what happened?")
        await wait_for(pilot, lambda: chat.state == "idle" and "run_end" in kinds(service, sid))
        await settle(pilot)
        warnings = [it for it in chat.history.items if it.kind == "warnings"]
        assert len(warnings) == 1
    after = kinds(service, sid)
    assert after.index("session_resumed") < after.index("run_start", 2)


async def test_an_approval_is_shown_on_open_and_resumed_when_answered(
        service: SessionService, project: Path) -> None:
    sid = _waiting_approval(service)
    before = _state(service, sid)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen)
                       and app.screen.approval is not None)
        await pilot.pause(0.3)
        assert app.screen.chat.handle is None
    assert _state(service, sid) == before  # shown, not answered: nothing written

    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen)
                       and app.screen.approval is not None)
        chat = app.screen
        await pilot.pause(0.2)
        chat.query_one(ApprovalPanel).take_focus()
        await pilot.press("1")
        await wait_for(pilot, lambda: (project / "out.txt").exists()
                       and chat.state == "idle")
        await settle(pilot)
    after = kinds(service, sid)
    assert after.index("session_resumed") < after.index("approval_decision")
    assert after.count("approval_decision") == 1


def test_a_rename_is_not_activity(service: SessionService) -> None:
    sid = _interrupted(service)
    time.sleep(0.01)
    other = write_session(service, "Newer", [msg("user", "hello", 1)])
    updated = service.get(sid).updated_at
    time.sleep(0.01)
    service.rename(sid, "A better title")
    fresh = SessionService(service.layout.home, service.project)
    assert fresh.get(sid).title == "A better title"
    assert fresh.get(sid).updated_at == updated
    assert [s.id for s in fresh.list_sessions().sessions] == [other, sid]


# -- a real terminal ---------------------------------------------------------------------
def test_open_and_close_in_a_terminal_changes_nothing(
        tmux_server: Callable[..., str], service: SessionService, home: Path,
        project: Path, tmp_path: Path) -> None:
    sid = _interrupted(service)
    time.sleep(0.01)
    write_session(service, "Newer", [msg("user", "hello", 1)])
    before = _state(service, sid)
    env = app_env(home, tmp_path / "config.toml")
    script = f"{app_command(project, env, '--resume', sid)}; echo EXITED; sleep 60"
    tmux_server("new-session", "-d", "-s", "main", "-x", "120", "-y", "36", script)
    screen = lambda: tmux_server("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "tool_interrupted" in screen(), 30, "the session with its warnings")
    time.sleep(0.5)
    tmux_server("send-keys", "-t", "main", "C-q")
    until(lambda: "EXITED" in screen(), 20, "the app to exit")
    assert _state(service, sid) == before
    assert f"mttui --resume {sid}" in screen()  # how to come back
