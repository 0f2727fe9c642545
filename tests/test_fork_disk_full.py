"""A fork on a disk that fills up mid-way: ``mttui fork`` fails with exit 1 and a line that
says so, never "no session" (exit 5), and leaves no partial session listed (it removed
what it made). The data home is on a real small tmpfs (root mounts it), filled up to a
few KB of room for several amounts; the source session is the one the fork copies.
Where mounting is refused, a full disk is injected into the ``mttui`` process instead
(``support/disk_full.py``) at each of its durable writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mttui.session.service import SessionService
from tests.support.index_dump import logical_dump
from tests.support.long_session import write_long_session

ROOMS_KB = [4, 25, 60, 120, 250, 500, 900]
DISK_FULL = Path(__file__).parent / "support" / "disk_full.py"


def _mount(where: Path) -> bool:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                          capture_output=True, text=True)  # fmt: skip
    return done.returncode == 0


def _fill(home: Path, room: int) -> Path:
    filler = home / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    st = os.statvfs(home)
    os.ftruncate(fd, max(os.path.getsize(filler) - room + st.f_bavail * st.f_frsize, 0))
    os.close(fd)
    return filler


def _mttui(home: Path, project: Path, *args: str,
           full_at: int = 0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "c.toml")}
    env.pop("MTTUI_DEBUG", None)
    entry = ["-m", "mttui.cli"]
    if full_at:  # the injected full disk, from the N-th durable write on
        env["MTTUI_ENOSPC_AT"] = str(full_at)
        entry = [str(DISK_FULL)]
    return subprocess.run([sys.executable, *entry, "--project", str(project), *args],
                          env=env, capture_output=True, text=True, timeout=120)


def _sessions(home: Path, project: Path) -> dict[str, dict[str, object]]:
    r = _mttui(home, project, "sessions", "--json")
    assert r.returncode == 0, r.stderr
    return {s["id"]: s for s in json.loads(r.stdout)["sessions"]}


def _one_case(home: Path, project: Path, tmp: Path, *, room: int = 0, full_at: int = 0) -> str:
    """Fork with little room; the outcome: ``ok``, ``failed``."""
    filler = _fill(home, room * 1024) if room else None
    r = _mttui(home, project, "fork", "5dc000000000", "--json", full_at=full_at)
    if filler is not None:
        filler.unlink()  # space is back
    assert r.returncode in (0, 1), (room, full_at, r.returncode, r.stderr)  # never 5
    listed = _sessions(home, project)
    if r.returncode == 0:
        new = json.loads(r.stdout)["session_id"]
        assert listed[new]["incomplete"] is False and listed[new]["message_count"] == 600
        return "ok"
    lines = [line for line in r.stderr.splitlines() if line.startswith("mttui:")]
    assert len(lines) == 1 and "disk is full" in lines[0], r.stderr  # (and warnings)
    # what it made is gone (or, when it could not be removed, named and marked incomplete)
    others = [s for sid, s in listed.items() if sid != "5dc000000000"]
    assert all(s["incomplete"] and str(s["id"]) in lines[0] for s in others), (lines, others)
    service = SessionService(home, project)
    service.close()
    from mttui.session.index.ingest import build_index

    build_index(service.layout, tmp / "rebuilt.sqlite")
    assert logical_dump(service.layout.index_path) == logical_dump(tmp / "rebuilt.sqlite")
    (tmp / "rebuilt.sqlite").unlink()
    return "failed"


def _source(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    write_long_session(service, "5dc000000000", 600, every=250, text_bytes=1200)
    service.close()


def test_a_fork_on_a_full_disk_fails_cleanly(tmp_path: Path, project: Path) -> None:
    mnt = tmp_path / "small"
    real = _mount(mnt)
    seen: set[str] = set()
    try:
        for k, room in enumerate(ROOMS_KB):
            home = (mnt if real else tmp_path) / f"home{room}"
            home.mkdir(parents=True)
            _source(home, project)
            if real:
                seen.add(_one_case(home, project, tmp_path, room=room))
            else:
                seen.add(_one_case(home, project, tmp_path, full_at=k + 1))
            again = _mttui(home, project, "fork", "5dc000000000", "--json")
            assert again.returncode == 0, again.stderr  # with room, the same fork works
            shutil.rmtree(home)
    finally:
        if real:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
    assert "failed" in seen  # the disk was full at some point of the fork
