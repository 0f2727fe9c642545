"""In a real terminal: a message typed and sent while ``mttui`` is still starting (the
terminal not yet in raw mode, so its Enter became a line feed) is sent, not left in the
prompt as a line break."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.support.terminal import app_command, app_env, sent_texts, until


def test_enter_typed_before_the_app_took_the_terminal_sends(
        tmux_server: Callable[..., str], home: Path, project: Path, tmp_path: Path) -> None:
    env = app_env(home, tmp_path / "config.toml")
    # The shell sleeps first: the keys below are typed while the terminal is in cooked
    # mode, as when the user types on at once after starting the program.
    tmux_server("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
                f"sleep 1.5; {app_command(project, env)}; sleep 60")
    time.sleep(0.3)
    tmux_server("send-keys", "-t", "main", "-l", "typed ahead")
    tmux_server("send-keys", "-t", "main", "Enter")
    screen = lambda: tmux_server("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "Offline answer" in screen(), 40, "the answer to the message typed ahead")
    assert sent_texts(home) == ["typed ahead"]
