"""SIGHUP (terminal closed) and SIGTERM (``kill PID``) on the TUI do what ctrl+q does:
the run stops, the tool's process group is killed and its outcome written, the session
is closed, the terminal is restored. A real terminal: the app runs in tmux."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mttui.session.reader import read_all
from tests.support.terminal import app_command, app_env, until

SLEEP = 3  # the tool's sleep; its file would appear after that


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(") ")[-1][:1] != "Z"


def _stty_flags(path: Path) -> set[str]:
    words = path.read_text().replace(";", " ").split()
    return {w for w in words if w.lstrip("-") in ("icanon", "echo", "isig", "icrnl")}


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, None],
                         ids=["HUP", "TERM", "terminal-closed"])
def test_a_signal_on_the_tui_does_what_quit_does(
    tmux_server: Callable[..., str], home: Path, project: Path, tmp_path: Path,
    signum: int | None,
) -> None:
    """``None``: the terminal itself goes away (tmux closes the pty: SIGHUP, and
    the terminal can no longer be written)."""
    tmux = tmux_server
    screen = lambda: tmux("capture-pane", "-p", "-t", "main")  # noqa: E731
    env = app_env(home, tmp_path / "config.toml", MTTUI_APPROVAL="yolo")
    before, after = tmp_path / "stty-before", tmp_path / "stty-after"
    start = app_command(project, env).replace(" && env ", f" && stty -a > '{before}'; env ", 1)
    script = f"{start}; stty -a > '{after}'; sleep 60"
    tmux("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", script)
    shell = int(tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())
    # the interpreter itself: a child the shell forks (for stty) carries the whole
    # script, "mttui.cli" included, in its command line until it execs
    app = f"^{re.escape(sys.executable)} -m mttui[.]cli"
    pid = int(until(lambda: subprocess.run(["pgrep", "-P", str(shell), "-f", app],
                                            capture_output=True, text=True).stdout.split(),
                     20, "the app process")[0])  # fmt: skip
    # a project without sessions opens a new chat at once
    until(lambda: "Stop" in screen(), 30, "the chat")
    time.sleep(0.5)
    tmux("send-keys", "-t", "main", "-l", f"!sleep {SLEEP}; touch done.txt")
    tmux("send-keys", "-t", "main", "Enter")
    logs = lambda: list(home.rglob("*.jsonl"))  # noqa: E731
    until(lambda: logs() and b'"tool_dispatch"' in logs()[0].read_bytes(), 30,
           "the tool to start")  # fmt: skip
    started = time.monotonic()
    if signum is None:
        tmux("kill-session", "-t", "main")
    else:
        os.kill(pid, signum)
    # (a gone terminal can block the app's redraws (the run's spinner): then the quit
    # goes the signal thread's way, QUIT_GRACE + 5 s)
    until(lambda: not _alive(pid), 30, "the app to exit")
    time.sleep(max(0.0, started + SLEEP + 2 - time.monotonic()))
    assert not (project / "done.txt").exists()  # the tool's process group was killed
    records = read_all(logs()[0])[0]
    outcomes = [r["status"] for r in records if r["type"] == "tool_outcome"]
    assert outcomes and set(outcomes) <= {"interrupted", "cancelled"}
    assert records[-1]["type"] == "session_end"
    if signum is None:
        return  # no terminal any more to look at
    # the terminal is restored: the shell after the app sees the modes it had before
    until(after.exists, 10, "the shell after the app")
    assert _stty_flags(after) == _stty_flags(before)
