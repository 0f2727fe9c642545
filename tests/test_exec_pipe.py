"""`mttui exec … | head -1`: a closed pipe ends cleanly, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mttui.session.service import SessionService


def test_closed_stdout_ends_without_traceback(home: Path, project: Path) -> None:
    # a slow offline stream, so the pipe closes while the run is still writing events
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_OFFLINE_DELAY": "0.02"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mttui.cli", "--project", str(project), "exec",
         "--provider", "offline", "hello"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert first.strip()
    proc.stdout.close()  # the reader goes away, like `| head -1`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "GeneratorExit" not in err
    assert proc.returncode == 141  # like a signal: 128 + SIGPIPE, after a clean stop
    # the session stays readable and consistent
    service = SessionService(home, project)
    service.catch_up()
    sessions = service.list_sessions().sessions
    assert len(sessions) == 1
    records, stats = service.records(sessions[0].id)
    assert stats.corrupt_lines == 0 and records[0]["type"] == "session_start"
    ends = [r["status"] for r in records if r["type"] == "run_end"]
    assert ends == ["stopped"]  # the run was stopped, not abandoned halfway
