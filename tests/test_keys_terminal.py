"""In a real terminal (tmux): ``ctrl+c`` during a running shell tool stops the run and
the app stays open; lines sent faster than the chat handles them, without bracketed
paste, reach the model once each, in order, and leave the prompt empty."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from mttui.session.reader import read_all
from tests.support.terminal import app_command, app_env, until

SLEEP = 4  # the tool's sleep; its file would appear after that


def _records(home: Path) -> list[dict[str, object]]:
    logs = list(home.rglob("session-*.jsonl"))
    return read_all(logs[0])[0] if logs else []


def _users(home: Path) -> list[object]:
    """What the user sent, in order (a queued text is taken from the queue)."""
    return [r["message"]["content"] for r in _records(home)  # type: ignore[index]
            if r["type"] in ("transcript_message", "pending_take")
            and r["message"].get("role") == "user"]  # type: ignore[attr-defined]


def _ends(home: Path) -> list[object]:
    return [r.get("status") for r in _records(home) if r["type"] == "run_end"]


def test_ctrl_c_stops_a_running_shell_tool_and_the_app_stays(
        tmux_server: Callable[..., str], home: Path, project: Path, tmp_path: Path) -> None:
    tmux = tmux_server
    env = app_env(home, tmp_path / "config.toml", MTTUI_APPROVAL="yolo")
    tmux("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
         f"{app_command(project, env)}; echo APP-EXITED; sleep 60")
    screen = lambda: tmux("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "Stop" in screen(), 30, "the chat")
    time.sleep(0.5)
    tmux("send-keys", "-t", "main", "-l", f"!sleep {SLEEP}; touch done.txt")
    tmux("send-keys", "-t", "main", "Enter")
    until(lambda: any(r["type"] == "tool_dispatch" for r in _records(home)), 30,
          "the tool to start")
    tmux("send-keys", "-t", "main", "C-c")
    until(lambda: _ends(home) == ["stopped"], 30, "the run to stop")
    time.sleep(SLEEP + 1)
    assert not (project / "done.txt").exists()  # the tool's process group was killed
    assert "APP-EXITED" not in screen()
    # the app goes on: the next message is answered
    tmux("send-keys", "-t", "main", "-l", "still here")
    tmux("send-keys", "-t", "main", "Enter")
    until(lambda: _ends(home) == ["stopped", "completed"], 30, "the next answer")
    # idle and empty: twice quits, as before
    tmux("send-keys", "-t", "main", "C-c")
    time.sleep(0.3)
    tmux("send-keys", "-t", "main", "C-c")
    until(lambda: "APP-EXITED" in screen(), 30, "the app to exit")
    assert _users(home) == [f"!sleep {SLEEP}; touch done.txt", "still here"]


def test_lines_sent_without_bracketed_paste_arrive_once_in_order(
        tmux_server: Callable[..., str], home: Path, project: Path, tmp_path: Path) -> None:
    tmux = tmux_server
    env = app_env(home, tmp_path / "config.toml", MTTUI_APPROVAL="yolo")
    tmux("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
         f"{app_command(project, env)}; sleep 60")
    screen = lambda: tmux("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "Stop" in screen(), 30, "the chat")
    time.sleep(0.5)
    lines = ["!sleep 1; echo slept", "R2", "R3", "R4", "R5"]
    # one send: the characters and the Enters (CR) arrive as fast as the pty passes them
    tmux("send-keys", "-t", "main", "-l", "".join(f"{line}\r" for line in lines))
    until(lambda: len(_ends(home)) == len(lines), 60, "every line answered")
    time.sleep(1.0)  # a late duplicate would have been sent by now
    assert _users(home) == lines
    assert _ends(home) == ["completed"] * len(lines)
    prompt = [row for row in screen().splitlines() if row.startswith("│")][-1]
    assert "R" not in prompt.strip("│ "), prompt
