"""The ``shell`` tool: bash in the project directory, in its own process group.

The whole group is killed on timeout or when a stop outlives its grace period,
so children (``sleep 100 &``, pipelines) do not outlive the call.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..redact import without_secrets
from .capture import BoundedCapture
from .progress import PROGRESS_INTERVAL, TAIL_BYTES

DEFAULT_TIMEOUT = 120.0
POLL = 0.05
CHUNK = 1 << 20


@dataclass(frozen=True)
class ShellResult:
    status: str  # success | error | interrupted
    output: str
    exit_code: int | None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        # the leader is gone; make sure no straggler of its group survives either
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return


def spawn(command: str, cwd: Path, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start ``bash -c command`` in its own process group, stdout+stderr on one pipe.

    The one place the argv is built: a sandbox wraps the command here.
    """
    return subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env),
        start_new_session=True,
    )


def run_shell(
    project: Path,
    command: str,
    timeout: float | None = None,
    *,
    stop: threading.Event | None = None,
    grace: float = 2.0,
    progress: Callable[[str], None] | None = None,
) -> ShellResult:
    """Run ``command`` with ``bash -c``; output is stdout and stderr interleaved, capped.

    The output is read as it comes into a bounded capture (head and tail kept);
    ``progress`` gets the recent tail at most every 0.2 s and once at the end.
    """
    limit = float(timeout) if timeout else DEFAULT_TIMEOUT
    # a command has no business seeing secrets (the model could print them)
    proc = spawn(command, project, without_secrets(os.environ))
    assert proc.stdout is not None
    capture = BoundedCapture()
    ticker = _Ticker(capture, progress)
    started = time.monotonic()
    stop_seen: float | None = None
    note = ""
    killed_as = ""
    try:
        fd = proc.stdout.fileno()
        open_pipe = True
        while True:
            if open_pipe:
                open_pipe = _pump(fd, capture, POLL)
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(POLL)
            ticker.maybe()
            if proc.poll() is not None:
                if open_pipe:  # what is already in the pipe; a lingering child keeps no hold
                    open_pipe = _drain(fd, capture)
                break
            now = time.monotonic()
            if stop is not None and stop.is_set():
                stop_seen = stop_seen or now
                if now - stop_seen >= grace:
                    _kill_group(proc)
                    killed_as, note = "interrupted", "[stopped by the user; process group killed]"
                    break
            if now - started >= limit:
                _kill_group(proc)
                killed_as = "error"
                note = f"[timed out after {limit:g} s; process group killed]"
                break
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        proc.stdout.close()
    ticker.final()
    text = capture.text()
    code = proc.returncode
    if killed_as:
        return ShellResult(killed_as, _join(text, note), code)
    if code == 0:
        return ShellResult("success", text if text else "(no output)", code)
    return ShellResult("error", _join(text, f"[exit code {code}]"), code)


def _pump(fd: int, capture: BoundedCapture, wait: float) -> bool:
    """Read what arrives within ``wait`` seconds; False at end of output."""
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        if not ready:
            return True
        data = os.read(fd, CHUNK)
        if not data:
            return False
        capture.feed(data)
        if left <= 0:
            return True


def _drain(fd: int, capture: BoundedCapture, quiet: float = 0.1, most: float = 1.0) -> bool:
    """After the command exits: read until end of output, ``quiet`` s of silence or ``most`` s."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], quiet)
        if not ready:
            return True
        data = os.read(fd, CHUNK)
        if not data:
            return False
        capture.feed(data)
    return True


class _Ticker:
    """Reports the recent tail to ``progress`` at most every interval, and at the end."""

    def __init__(self, capture: BoundedCapture, progress: Callable[[str], None] | None) -> None:
        self.capture, self.progress = capture, progress
        self.last = time.monotonic()
        self.seen = 0

    def maybe(self) -> None:
        now = time.monotonic()
        if self.progress is None or now - self.last < PROGRESS_INTERVAL:
            return
        self.last = now
        if self.capture.total != self.seen:
            self.seen = self.capture.total
            self.progress(self.capture.recent(TAIL_BYTES))

    def final(self) -> None:
        if self.progress is not None:
            self.progress(self.capture.recent(TAIL_BYTES))


def _join(text: str, note: str) -> str:
    if not text:
        return note
    return text + ("" if text.endswith("\n") else "\n") + note
