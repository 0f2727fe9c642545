"""Timing ``mttui`` in a real terminal: from the process's start until text shows on it.

A headless app says when its widgets hold the rows; a user sees them only when the
frame is written to the terminal, after the command line has parsed its arguments
and read the settings, and the terminal driver has started. This runs the command in
a pseudo-terminal of a fixed size and reads what it writes until ``needle`` (UTF-8)
appears: the time a person waits.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

from .fresh import bytecode_env, user_python

ROWS, COLS = 36, 120
# ``mttui`` as its console script runs it; ``prelude``: imports paid before it (the baseline)
ENTRY = "import sys\n{prelude}\nfrom mttui.cli import main\nsys.exit(main())\n"


# The floor under any Textual app's start here: a bare one showing a 30-row table.
BARE_TEXTUAL = """
from textual.app import App
from textual.widgets import DataTable
class Bare(App):
    def compose(self):
        yield DataTable()
    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns("row", "text")
        for i in range(30):
            table.add_row(str(i), f"bare textual row {i}")
Bare().run()
"""


def until_shown(root: Path, home: Path, project: Path, needle: str, *, prelude: str = "",
                code: str | None = None, timeout: float = 60) -> float:
    """Seconds from starting ``mttui`` (no arguments, in ``project``, data in ``home``;
    bytecode cached under ``root``), or ``python -c code``, until its terminal shows
    ``needle``; then killed."""
    env = dict(bytecode_env(root / "pycache", home), TERM="xterm-256color",
               TEXTUAL_ANIMATIONS="none", MTTUI_CONFIG=str(root / "no-config.toml"))
    for key in ("COLUMNS", "LINES", "TMUX", "MTTUI_PROVIDER"):
        env.pop(key, None)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    want = needle.encode()
    seen = b""
    begin = time.perf_counter()
    code = ENTRY.format(prelude=prelude) if code is None else code
    proc = subprocess.Popen([user_python(root), "-c", code],
                            cwd=project, env=env, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)  # fmt: skip
    os.close(slave)
    try:
        while want not in seen:
            left = timeout - (time.perf_counter() - begin)
            if left <= 0 or proc.poll() is not None and not _ready(master, 0):
                raise RuntimeError(f"mttui never showed {needle!r}: {_tail(seen)}")
            if _ready(master, min(left, 0.5)):
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # the other side is gone
                    chunk = b""
                if not chunk and proc.poll() is not None:
                    raise RuntimeError(f"mttui ended before showing {needle!r}: {_tail(seen)}")
                seen = (seen + chunk)[-(1 << 16):]
        return time.perf_counter() - begin
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)


def _ready(fd: int, wait: float) -> bool:
    return bool(select.select([fd], [], [], wait)[0])


def _tail(seen: bytes) -> str:
    return repr(seen[-200:].decode("utf-8", "replace"))
