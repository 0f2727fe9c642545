"""The ``shell`` tool: bash in the project directory, in its own process group.

The whole group is killed on timeout or when a stop outlives its grace period,
so children (``sleep 100 &``, pipelines) do not outlive the call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..redact import without_secrets
from .paths import cap_output
from .sandbox import Sandbox, SandboxUnavailable

DEFAULT_TIMEOUT = 120.0
POLL = 0.05


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


def run_shell(
    project: Path,
    command: str,
    timeout: float | None = None,
    *,
    stop: threading.Event | None = None,
    grace: float = 2.0,
    sandbox: Sandbox | None = None,
) -> ShellResult:
    """Run ``command`` with ``bash -c``; output is stdout and stderr interleaved, capped."""
    limit = float(timeout) if timeout else DEFAULT_TIMEOUT
    # a command has no business seeing secrets (the model could print them)
    env = without_secrets(os.environ)
    try:  # the sandbox's argv prefix (bwrap …); an unusable sandbox fails closed
        prefix = sandbox.prefix(project) if sandbox is not None else []
    except SandboxUnavailable as exc:
        return ShellResult("error", f"error: {exc}", None)
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [*prefix, "bash", "-c", command],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        started = time.monotonic()
        stop_seen: float | None = None
        note = ""
        killed_as = ""
        while True:
            try:
                proc.wait(POLL)
                break
            except subprocess.TimeoutExpired:
                pass
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
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    code = proc.returncode
    if killed_as:
        return ShellResult(killed_as, cap_output(_join(text, note)), code)
    if code == 0:
        return ShellResult("success", cap_output(text if text else "(no output)"), code)
    return ShellResult("error", cap_output(_join(text, f"[exit code {code}]")), code)


def _join(text: str, note: str) -> str:
    if not text:
        return note
    return text + ("" if text.endswith("\n") else "\n") + note
