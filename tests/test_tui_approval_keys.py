"""Approvals cannot be typed into: the prompt keeps the text and the focus while an
approval waits; only deliberate keys on the focused panel decide; escape denies; a
session grant asks once more, is shown in the status bar and revoked by /permissions."""

from __future__ import annotations

from mttui.graph.runner import Runner
from mttui.screens.chat import ChatScreen
from mttui.screens.permissions import PermissionsScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from tests.support.tui import (
    SIZE,
    kinds,
    make_app,
    screen_text,
    send,
    session_records,
    settings,
    settle,
    wait_for,
)


async def asked(pilot, command: str = "!echo approved-and-ran") -> ChatScreen:
    chat = pilot.app.screen
    assert isinstance(chat, ChatScreen)
    await send(pilot, command)
    await wait_for(pilot, lambda: chat.approval is not None)
    await pilot.pause()
    return chat


async def test_typing_during_an_approval_goes_to_the_prompt_and_the_queue(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = await asked(pilot)
        prompt = chat.query_one(PromptArea)
        assert prompt.has_focus and "echo approved-and-ran" in screen_text(app)
        await pilot.press("n", *"!echo third-check", "enter")
        await wait_for(pilot, lambda: any(r["mode"] == "queue" for r in chat.lane.rows))
        await pilot.press(*"what")
        await pilot.pause()
        assert prompt.has_focus and prompt.text == "what"
        assert chat.approval is not None and chat.state == "awaiting approval"
        assert [r["text"] for r in chat.lane.rows if r["mode"] == "queue"] == [
            "n!echo third-check"]
        sid = chat.chat.session_id
        assert session_records(service, sid, "approval_decision") == []
        assert chat.query_one(StatusBar).grants == 0
        await chat.shutdown()
    assert session_records(service, sid, "approval_decision") == []
    assert "tool_dispatch" not in kinds(service, sid)
    assert Runner.for_service(service, service.open_session(
        service.get(sid).path), settings()).remembered == set()


async def test_number_keys_decide_only_once_the_panel_is_focused(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await pilot.press("b", "c", "ctrl+a", "a")  # no approval: ctrl+a is the line start
        assert prompt.text == "abc"
        prompt.clear()
        chat = await asked(pilot)
        await pilot.press("1")  # typed into the prompt
        assert chat.query_one(PromptArea).text == "1" and chat.approval is not None
        await pilot.press("ctrl+a")
        assert chat.approval is not None and chat.approval.has_focus
        await pilot.press("1")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.approval is None)
        await settle(pilot)
        tool = chat.query_one(HistoryView).find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "success"
        assert chat.query_one(PromptArea).has_focus
        assert chat.query_one(PromptArea).text == "1"  # the prompt kept its text


async def test_escape_on_the_panel_denies(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = await asked(pilot, "!touch should-not-exist")
        await pilot.press("escape")  # from the prompt: focuses the panel, decides nothing
        await pilot.pause()
        assert chat.approval is not None and chat.approval.has_focus
        sid = chat.chat.session_id
        assert session_records(service, sid, "approval_decision") == []
        await pilot.press("escape")  # on the panel: deny
        await wait_for(pilot, lambda: chat.state == "idle" and chat.approval is None)
        await settle(pilot)
        tool = chat.query_one(HistoryView).find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "denied"
    assert list(session_records(service, sid, "approval_decision")[0]["decisions"].values()) == [
        "deny"]
    assert not (service.project / "should-not-exist").exists()


async def test_session_grant_needs_a_confirmation_and_is_shown_and_revoked(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = await asked(pilot, "!echo granted")
        await pilot.press("ctrl+a", "3")
        await pilot.pause()
        panel = chat.approval
        assert panel is not None and panel.confirming == "shell"
        assert "Approve every shell call for the rest of this session" in screen_text(app)
        sid = chat.chat.session_id
        assert session_records(service, sid, "approval_decision") == []
        await pilot.press("escape")  # backs out of the confirmation only
        await pilot.pause()
        assert chat.approval is panel and panel.confirming is None
        assert session_records(service, sid, "approval_decision") == []
        await pilot.press("3", "space", "enter")  # "3 …" then enter: any other key backs out
        await pilot.pause()
        assert chat.approval is panel and panel.confirming is None
        assert session_records(service, sid, "approval_decision") == []
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.approval is None)
        await wait_for(pilot, lambda: chat.query_one(StatusBar).grants == 1)
        await settle(pilot)
        assert "grants 1" in screen_text(app)
        assert session_records(service, sid, "approval_decision")[0]["remember"] == ["shell"]

        prompt = chat.query_one(PromptArea)
        prompt.text = "/permissions"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionsScreen))
        await pilot.pause()
        assert "shell" in screen_text(app)
        await pilot.press("r")
        await wait_for(pilot, lambda: session_records(service, sid, "grant_revoked") != [])
        await wait_for(pilot, lambda: chat.query_one(StatusBar).grants == 0)
        assert app.screen is chat and chat.chat.grants() == []
    assert session_records(service, sid, "grant_revoked")[0]["tools"] == ["shell"]
    writer = service.open_session(service.get(sid).path)
    try:  # a new runner on the same log: the grant is gone
        assert Runner.for_service(service, writer, settings()).remembered == set()
    finally:
        writer.close()


async def test_grant_survives_a_restart_and_the_resume_says_so(
        service: SessionService) -> None:
    writer = service.create_session(provider="offline", model="offline", title="Granted")
    runner = Runner.for_service(service, writer, settings())
    list(runner.run("!echo first"))
    pending = runner.pending_approval()
    assert pending is not None
    list(runner.answer_approval(pending.request_id,
                                {c["call_id"]: "approve" for c in pending.tool_calls},
                                remember=["shell"]))
    runner.close()
    writer.close()
    app = make_app(service, open_session=writer.session_id)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen)
                       and app.screen.query_one(StatusBar).grants == 1)
        chat = app.screen
        await send(pilot, "!echo second")  # runs without asking: the grant holds
        await wait_for(pilot, lambda: chat.chat.handle is not None and chat.state == "idle"
                       and "tool_outcome" in kinds(service, writer.session_id)[-4:])
        await settle(pilot)
        assert chat.approval is None
        assert "still run without asking: shell" in screen_text(app)
    resumed = session_records(service, writer.session_id, "session_resumed")
    assert "grants_restored" in resumed[-1]["warnings"]


# -- a real terminal (tmux) ------------------------------------------------------------
def tmux(socket: str, *args: str) -> str:
    import subprocess

    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True,
                          check=False).stdout


def wait_screen(socket: str, wanted, limit: float = 30.0) -> str:
    """Poll the pane (no timing assertion: the limit only bounds a hang)."""
    import time

    end = time.monotonic() + limit
    while True:
        screen = tmux(socket, "capture-pane", "-p", "-t", "tui")
        if wanted(screen):
            return screen
        assert time.monotonic() < end, f"not reached; the screen:\n{screen}"
        time.sleep(0.1)


def test_typing_during_an_approval_in_a_real_terminal(
        service: SessionService, tmp_path) -> None:
    import os
    import shlex
    import shutil
    import sys

    assert shutil.which("tmux"), "tmux is needed (apt-get install tmux)"
    writer = service.create_session(provider="offline", model="offline", title="Waiting")
    runner = Runner.for_service(service, writer, settings())
    list(runner.run("!echo first-check"))
    assert runner.pending_approval() is not None
    runner.close()
    writer.close()
    sid = writer.session_id
    env = {"MTTUI_HOME": os.environ["MTTUI_HOME"], "MTTUI_CONFIG": os.environ["MTTUI_CONFIG"],
           "MTTUI_PROVIDER": "offline", "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
           "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    command = " ".join([
        "env", *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
        shlex.quote(sys.executable), "-m", "mttui.cli", "--resume", sid])
    socket = f"mttui-test-{os.getpid()}"
    tmux(socket, "new-session", "-d", "-s", "tui", "-x", "110", "-y", "34",
         "-c", str(service.project), command)
    try:
        wait_screen(socket, lambda s: "echo first-check" in s and "Approval" in s)
        for keys in ("n", "!echo third-check"):
            tmux(socket, "send-keys", "-t", "tui", "-l", keys)
        tmux(socket, "send-keys", "-t", "tui", "Enter")
        wait_screen(socket, lambda s: "n!echo third-check" in s)  # queued, in the lane
        tmux(socket, "send-keys", "-t", "tui", "-l", "what")
        screen = wait_screen(socket, lambda s: "what" in s)
        assert "Approval needed" in screen and "awaiting approval" in screen
        assert session_records(service, sid, "approval_decision") == []
        tmux(socket, "send-keys", "-t", "tui", "C-q")  # quit: the approval stays pending
        wait_screen(socket, lambda s: not _alive(socket))  # the app has exited
    finally:
        tmux(socket, "kill-server")
    assert session_records(service, sid, "approval_decision") == []
    assert "tool_dispatch" not in kinds(service, sid)
    added = session_records(service, sid, "pending_add")
    assert [r["text"] for r in added] == ["n!echo third-check"]
    again = service.open_session(service.get(sid).path)
    try:
        assert Runner.for_service(service, again, settings()).remembered == set()
    finally:
        again.close()


def _alive(socket: str) -> bool:
    import subprocess

    return subprocess.run(["tmux", "-L", socket, "has-session", "-t", "tui"],
                          capture_output=True, check=False).returncode == 0


async def test_escape_while_typing_a_reason_keeps_it_and_denies_the_rest() -> None:
    from tests.support.approval import CALLS, Host, request

    app = Host(request(CALLS))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", *"not now", "escape")
        await pilot.pause()
    assert app.result is not None and app.result.reason == "not now"
    assert app.result.decisions == {"call_1": "deny", "call_2": "deny", "call_3": "deny"}
    assert app.result.remember == []
