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
from .death import deathsig_prefix
from .pids import Cgroup, Watch
from .progress import PROGRESS_INTERVAL, TAIL_BYTES
from .sandbox import Sandbox, SandboxUnavailable

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


def spawn(command: str, cwd: Path, env: Mapping[str, str],
          prefix: list[str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``bash -c command`` in its own process group, stdout+stderr on one pipe.

    The one place the argv is built: ``prefix`` is the sandbox's (``bwrap …``).
    """
    return subprocess.Popen(
        [*(prefix or []), "bash", "-c", command],
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
    sandbox: Sandbox | None = None,
    guarded: bool = False,
) -> ShellResult:
    """Run ``command`` with ``bash -c``; output is stdout and stderr interleaved, capped.

    The output is read as it comes into a bounded capture (head and tail kept);
    ``progress`` gets the recent tail at most every 0.2 s and once at the end.
    ``guarded``: the call runs unasked (:meth:`Sandbox.prefix`).
    """
    limit = float(timeout) if timeout else DEFAULT_TIMEOUT
    try:  # the sandbox's argv prefix (bwrap …); an unusable sandbox fails closed
        prefix, gits = sandbox.plan(project, guarded=guarded) if sandbox else ([], set())
    except SandboxUnavailable as exc:
        return ShellResult("error", f"error: {exc}", None)
    cgroup = Cgroup.create(sandbox.pids) if prefix and sandbox is not None else None
    try:
        res = _run(project, command, limit, stop, grace, progress, prefix, sandbox, cgroup)
    finally:
        if cgroup is not None:
            cgroup.close()
    note = sandbox.new_repositories(project, gits) if prefix and sandbox else ""
    return ShellResult(res.status, _join(res.output, note), res.exit_code) if note else res


def _run(project: Path, command: str, limit: float, stop: threading.Event | None,
         grace: float, progress: Callable[[str], None] | None, prefix: list[str],
         sandbox: Sandbox | None, cgroup: Cgroup | None) -> ShellResult:
    pids = sandbox.pids if prefix and sandbox is not None else None
    if not prefix:  # unsandboxed: the command still dies with mttui
        prefix = list(deathsig_prefix())
    elif cgroup is not None:
        prefix = [*cgroup.join_prefix(), *prefix]
    # a command has no business seeing secrets (the model could print them)
    proc = spawn(command, project, without_secrets(os.environ), prefix)
    assert proc.stdout is not None
    watch = Watch(proc.pid, pids, cgroup) if pids is not None else None
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
            if watch is not None and watch.over():
                _kill_group(proc)
                killed_as = "error"
                note = f"[process limit ({watch.limit} tasks) reached; process group killed]"
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
