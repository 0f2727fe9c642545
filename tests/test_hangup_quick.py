"""Closing the terminal while a tool runs: the app kills the tool's process group,
journals its outcome, closes the session and ends within the hang-up wait (not after
the 15 s fallback of a stuck event loop). A real terminal: the app runs in tmux."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from mttui.app import MttuiApp
from mttui.session.reader import read_all
from tests.support.terminal import until

SLEEP = 37  # the tool's sleep: far longer than any exit path, and no other test's


def _tmux(name: str) -> Callable[..., str]:
    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True,
                              check=False).stdout

    return tmux


def _gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/stat")
    return not status.exists() or status.read_text().split(") ")[-1][:1] == "Z"


def test_closing_the_terminal_during_a_tool_ends_the_app_at_once(
        home: Path, project: Path, tmp_path: Path) -> None:
    server = _tmux(f"mttui-hup-{os.getpid()}-{tmp_path.name}")
    try:
        _hang_up(server, home, project, tmp_path)
    finally:
        server("kill-server")


def _hang_up(server: Callable[..., str], home: Path, project: Path, tmp_path: Path) -> None:
    env = {"MTTUI_HOME": str(home), "MTTUI_CONFIG": str(tmp_path / "config.toml"),
           "MTTUI_PROVIDER": "offline", "MTTUI_APPROVAL": "yolo", "TERM": "xterm-256color",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    exports = " ".join(f"{k}='{v}'" for k, v in env.items())
    server("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
           f"cd '{project}' && exec env {exports} '{sys.executable}' -m mttui.cli")
    pid = int(server("display-message", "-p", "-t", "main", "#{pane_pid}").strip())
    until(lambda: "Stop" in server("capture-pane", "-p", "-t", "main"), 30, "the chat")
    time.sleep(0.5)
    server("send-keys", "-t", "main", "-l", f"!sleep {SLEEP}; touch done.txt")
    server("send-keys", "-t", "main", "Enter")
    logs = lambda: list(home.rglob("*.jsonl"))  # noqa: E731
    until(lambda: logs() and b'"tool_dispatch"' in logs()[0].read_bytes(), 30,
           "the tool to start")
    tool = until(lambda: subprocess.run(["pgrep", "-f", f"^sleep {SLEEP}$"],
                                         capture_output=True, text=True).stdout.split(),
                  10, "the tool's process")
    server("kill-session", "-t", "main")  # the terminal goes away: SIGHUP
    # the stop's grace for the tool, then the hang-up exit: well before QUIT_GRACE + 5 s
    until(lambda: _gone(pid), MttuiApp.HANGUP_WAIT + MttuiApp.HANGUP_EXIT + 1,
           "the app to exit")
    assert all(_gone(int(p)) for p in tool)  # the tool's process group was killed
    records = read_all(logs()[0])[0]
    kinds = [r["type"] for r in records]
    outcomes = [r["status"] for r in records if r["type"] == "tool_outcome"]
    assert outcomes == ["interrupted"]
    assert kinds[-3:] == ["transcript_message", "run_end", "session_end"]
    assert not (project / "done.txt").exists()
