"""A chat that is read-only because another process writes its session becomes
writable once that process lets go (quits, or closes the session), without being
opened again; while read-only, letters typed in the history are no commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mttui.screens.chat import ChatScreen
from mttui.session.reader import read_records
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from tests.support.tui import (
    SIZE,
    make_app,
    msg,
    notes_of,
    screen_text,
    settle,
    write_session,
)

ROOT = Path(__file__).resolve().parents[1]

# Another process holding the session for writing until a line arrives on its stdin.
HOLDER = r"""
import sys
from pathlib import Path
from mttui.session.service import SessionService
service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
writer = service.open_writer(sys.argv[3])
print("holding", flush=True)
sys.stdin.readline()
writer.close()
print("let go", flush=True)
sys.stdin.readline()
"""


def _hold(home: Path, project: Path, sid: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(home), str(project), sid],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip


def _session(service: SessionService) -> str:
    return write_session(service, "Shared", [msg("user", "first question", 1),
                                             msg("assistant", "one", 2)])


async def test_the_chat_becomes_writable_once_the_other_process_lets_go(
    service: SessionService, home: Path, project: Path
) -> None:
    sid = _session(service)
    holder = _hold(home, project, sid)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "holding"
        app = make_app(service, open_session=sid)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            chat = app.screen
            assert isinstance(chat, ChatScreen) and chat.state == "read-only"
            prompt = chat.query_one("#prompt", PromptArea)
            assert prompt.disabled and "Read-only" in str(prompt.placeholder)
            await pilot.pause(1.5)  # probed meanwhile: still held
            assert chat.state == "read-only"
            holder.stdin.write("let go\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "let go"
            for _ in range(60):  # the next probe sees it free (one a second)
                await pilot.pause(0.1)
                if chat.state != "read-only":
                    break
            assert chat.state == "idle"
            assert not prompt.disabled and "Read-only" not in str(prompt.placeholder)
            assert "read-only" not in screen_text(app).splitlines()[-2]
            assert chat.check_action("compact", ()) is True
            prompt.focus()
            prompt.text = "now from here"
            await pilot.press("enter")
            for _ in range(100):
                await pilot.pause(0.1)
                if chat.state == "idle" and chat.chat.handle is not None:
                    break
            await settle(pilot)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()
    path = service.get(sid).path
    sent = [r for _, r in read_records(Path(path)) if r.get("type") == "transcript_message"
            and r["message"].get("content") == "now from here"]  # fmt: skip
    assert sent  # written by this chat, the lock taken once the other let go


async def test_letters_typed_in_a_read_only_history_run_no_command(
    service: SessionService,
) -> None:
    sid = _session(service)
    with service.open_writer(sid):  # another writer holds the lock
        app = make_app(service, open_session=sid)
        said = notes_of(app)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            chat = app.screen
            assert chat.state == "read-only"
            said.clear()  # what opening it said
            chat.query_one(HistoryView).focus()
            await pilot.press("r", "f", "d", "x")  # once commands; the prompt is disabled
            await settle(pilot)
            assert app.screen is chat
            assert not said, said
            assert chat.query_one("#prompt", PromptArea).text == ""
