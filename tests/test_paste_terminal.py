"""In a real terminal: a paste holding escape sequences and line breaks stays one paste in
the prompt (nothing is sent until enter), and is sent whole."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.support.terminal import app_command, app_env, sent_texts, until

# Colours, a line break, ESC ESC 1 (Escape then "1" if read as keys), a title sequence.
HOSTILE = "first\x1b[31m red\x1b[0m\nsecond \x1b\x1b1 line\x1b]0;t\x07 end"


def test_a_hostile_paste_is_not_typed_as_keys(tmux_server: Callable[..., str], home: Path,
                                              project: Path, tmp_path: Path) -> None:
    env = app_env(home, tmp_path / "config.toml")
    tmux_server("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
                f"{app_command(project, env)}; sleep 60")
    screen = lambda: tmux_server("capture-pane", "-p", "-t", "main")  # noqa: E731
    until(lambda: "Stop" in screen(), 30, "a new chat (the project has no sessions)")
    time.sleep(0.5)
    paste = tmp_path / "paste.txt"
    paste.write_text(HOSTILE, encoding="utf-8")
    tmux_server("load-buffer", str(paste))
    tmux_server("paste-buffer", "-p", "-t", "main")  # bracketed, as the app asked for
    shown = until(lambda: (lambda s: s if "second  line end" in s else None)(screen()), 10,
                  "the pasted text in the prompt")
    assert "first red" in shown
    time.sleep(1.0)  # a line break read as enter would have sent it by now
    assert "Offline answer" not in screen()
    assert not list(home.rglob("session-*.jsonl")), "nothing is sent before enter"
    tmux_server("send-keys", "-t", "main", "Enter")
    until(lambda: "Offline answer" in screen(), 30, "the answer to the whole paste")
    assert sent_texts(home) == ["first red\nsecond  line end"]
