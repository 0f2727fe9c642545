"""A running shell command's output streams into its tool block (tail, spinner, seconds),
in a real terminal."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.terminal import app_command, app_env, until


def test_shell_output_streams_live(tmux_server: Callable[..., str], home: Path,
                                   project: Path, tmp_path: Path) -> None:
    env = app_env(home, tmp_path / "config.toml", MTTUI_APPROVAL="yolo")
    tmux_server("new-session", "-d", "-s", "main", "-x", "120", "-y", "36",
                f"{app_command(project, env)}; sleep 60")
    screen = lambda: tmux_server("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "Stop" in screen(), 30, "a new chat (the project has no sessions)")
    time.sleep(0.5)
    command = "!for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 1; done; touch finished"
    tmux_server("send-keys", "-t", "main", "-l", command)
    tmux_server("send-keys", "-t", "main", "Enter")
    # while it runs: the tail so far, the spinner and the seconds in the block
    seen = until(lambda: (lambda s: s if "tick2" in s and not (project / "finished").exists()
                           else None)(screen()), 30, "the output while the command runs")
    assert re.search(r"running \d+s", seen)
    later = until(lambda: (lambda s: s if "tick4" in s and not (project / "finished").exists()
                            else None)(screen()), 30, "more output while it runs")
    assert "tick3" in later
    until(lambda: (project / "finished").exists(), 30, "the command to end")
    # the block's own status (the model's summary after it also says "success")
    until(lambda: "✓ success" in screen(), 30, "the block to end")
    final = screen()
    # the block's own line (the status bar may still say "running" while the model sums up)
    block = [line for line in final.splitlines() if "▸ shell" in line]
    assert block and not re.search(r"running \d+s", block[0]), final  # the screen if not
