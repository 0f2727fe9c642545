"""A rebuild killed before its end leaves its temp index (as big as the index) behind:
``doctor`` reports it, ``doctor --repair`` and the next ``reindex`` remove it; the files
of a rebuild still running are left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from mttui.session.service import SessionService
from tests.support import logs


def run(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "c.toml")}
    return subprocess.run([sys.executable, "-m", "mttui.cli", "--project", str(project), *args],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_a_killed_rebuilds_files_are_reported_then_removed(home: Path, project: Path) -> None:
    items = [logs.message(f"m{i}", "user", f"word{i}") for i in range(4)]
    logs.new_session(SessionService(home, project), items)
    assert run(home, project, "reindex").returncode == 0
    dead = _dead_pid()
    left = [home / f".index-rebuild-{dead}.sqlite{suffix}" for suffix in ("", "-wal", "-shm")]
    for path in left:
        path.write_bytes(b"x" * 300_000)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    theirs = home / f".index-rebuild-{running.pid}.sqlite"
    theirs.write_bytes(b"y" * 1000)
    try:
        checked = run(home, project, "doctor", "--json")
        problems = json.loads(checked.stdout)["problems"]
        [leftover] = [p for p in problems if p["code"] == "rebuild_leftover"]
        assert "3 file(s), 0.9 MB" in leftover["message"] and str(dead) in leftover["message"]
        assert all(p.exists() for p in left)  # a check changes nothing
        repaired = json.loads(run(home, project, "doctor", "--repair", "--json").stdout)
        assert "rebuild_leftover" in [p["code"] for p in repaired["repaired"]]
        assert not any(p.exists() for p in left)
        assert theirs.exists()  # a rebuild still running keeps its files
        after = json.loads(run(home, project, "doctor", "--json").stdout)["problems"]
        assert "rebuild_leftover" not in [p["code"] for p in after]
    finally:
        running.send_signal(signal.SIGKILL)
        running.wait()
    assert run(home, project, "reindex").returncode == 0  # its process is gone now
    assert not theirs.exists()
