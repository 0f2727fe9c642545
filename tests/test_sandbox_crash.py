"""A sandboxed shell command dies with the agent: SIGKILL of ``mttui exec`` while the
command runs leaves no process of it behind (bwrap's die-with-parent and its PID
namespace), where an unsandboxed command in its own session would live on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.resume import env


def _alive(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def test_sigkill_of_the_agent_kills_the_sandboxed_command(home: Path, project: Path) -> None:
    marker = f"sandboxed{os.getpid()}z"
    command = f"!setsid bash -c 'exec -a {marker} sleep 300' & exec -a {marker} sleep 300"
    proc = subprocess.Popen([sys.executable, "-m", "mttui.cli", "exec", "--approval", "yolo",
                             "--sandbox", "workspace", command], cwd=project,
                            env=env(home), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _alive(marker):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(20)
        deadline = time.monotonic() + 15
        while _alive(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(marker)
    finally:
        if proc.poll() is None:
            proc.kill()
