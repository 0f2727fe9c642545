"""``mttui fork`` of a 20 000-message session SIGKILLed at random moments after its log
appeared (seeded): afterwards there is no fork, or a complete one with every message,
or one listed as incomplete, never a complete-looking fork with fewer messages; an
incomplete one is finished or deleted; the index equals a rebuild. Real processes,
real kills, the fast (raw-line copy) path."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from mttui.session.index.ingest import build_index
from mttui.session.service import SessionService
from tests.support.index_dump import logical_dump
from tests.support.long_session import write_long_session

SOURCE = "5dc000000000"
MESSAGES = 20_000
KILLS = 4  # in CI; each kill is a fresh process (its imports, then the fork)
SEED = 3512


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "c.toml")}
    env.pop("MTTUI_DEBUG", None)
    return env


def _mttui(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mttui.cli", "--project", str(project), *args],
                          env=_env(home), capture_output=True, text=True, timeout=300)


def _listed(home: Path, project: Path) -> dict[str, dict[str, object]]:
    r = _mttui(home, project, "sessions", "--json")
    assert r.returncode == 0, r.stderr
    return {s["id"]: s for s in json.loads(r.stdout)["sessions"] if s["id"] != SOURCE}


def _kill_a_fork(home: Path, project: Path, folder: Path, delay: float) -> bool:
    """Start a fork, SIGKILL it ``delay`` s after its log appears; whether it was killed
    (not already done)."""
    before = set(folder.glob("session-*.jsonl"))
    proc = subprocess.Popen([sys.executable, "-m", "mttui.cli", "--project", str(project),
                             "fork", SOURCE, "--json"], env=_env(home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while set(folder.glob("session-*.jsonl")) == before and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    time.sleep(delay)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return killed


def _equals_rebuild(home: Path, project: Path, tmp: Path) -> None:
    service = SessionService(home, project)
    service.close()
    build_index(service.layout, tmp)
    assert logical_dump(service.layout.index_path) == logical_dump(tmp)
    tmp.unlink()


def test_random_kills_of_a_large_fork(home: Path, project: Path, tmp_path: Path) -> None:
    service = SessionService(home, project)
    write_long_session(service, SOURCE, MESSAGES, every=5_000)
    folder = service.layout.project_dir(service.project_hash)
    service.close()
    rng = random.Random(SEED)
    outcomes: list[str] = []
    checked: set[str] = set()  # complete forks whose resume was checked
    for k in range(KILLS):
        forks = len(_listed(home, project))
        killed = _kill_a_fork(home, project, folder, rng.uniform(0.0, 1.2))
        listed = _listed(home, project)
        for sid, s in listed.items():
            if s["incomplete"] or sid in checked:
                continue
            assert s["message_count"] == MESSAGES, (sid, s["message_count"])  # complete
            check = json.loads(_mttui(home, project, "resume-check", sid, "--json").stdout)
            assert (check["mode"], check["warnings"]) == ("execution", []), check  # seeded
            checked.add(sid)
        partial = [sid for sid, s in listed.items() if s["incomplete"]]
        assert len(partial) <= 1
        outcomes.append("incomplete" if partial else "complete" if len(listed) > forks else
                        "nothing")
        print(f"kill {k}: {'killed' if killed else 'ended first'}, {outcomes[-1]}")
        for sid in partial:  # finish one, delete the next
            if k % 2 == 0:
                r = _mttui(home, project, "fork", sid, "--finish", "--json")
                assert r.returncode == 0, r.stderr
                assert json.loads(r.stdout)["messages"] == MESSAGES
            else:
                r = _mttui(home, project, "delete", sid, "--yes")
                assert r.returncode == 0, r.stderr
            after = _listed(home, project)
            assert sid not in after
            assert all(not s["incomplete"] and s["message_count"] == MESSAGES
                       for s in after.values())
        _equals_rebuild(home, project, tmp_path / f"rebuilt-{k}.sqlite")
    assert "incomplete" in outcomes, outcomes  # at least one kill fell mid-fork
