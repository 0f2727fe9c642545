"""A real full disk: the data home on a small tmpfs, filled up to a few KB of room.

One approved shell turn runs with that little space (for several amounts of
room), then the filler is removed (space returns) and the session goes on. The
tool runs at most once, every call has at most one outcome, a failure says the
disk is full. Mounting needs root; where the mount is refused (no privileges),
the same checks run with an injected ENOSPC at the dispatch write instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from mttui.session.reader import read_all
from tests.support.disk_full import exec_here
from tests.support.fake_openai import FakeOpenAI, text, tools

ROOMS_KB = [0, 8, 24, 64, 160, 400]


def _mount(where: Path) -> bool:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
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
    free = st.f_bavail * st.f_frsize
    os.ftruncate(fd, max(os.path.getsize(filler) - room + free, 0))  # give back ``room``
    os.close(fd)
    return filler


def test_a_real_small_disk_never_runs_a_tool_twice(
    tmp_path: Path, project: Path, fake_openai: FakeOpenAI,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    mnt = tmp_path / "small"
    real = _mount(mnt)
    try:
        for room in ROOMS_KB:
            home = mnt / f"home{room}"
            home.mkdir(parents=True)
            monkeypatch.setenv("MTTUI_HOME", str(home))
            exec_ = exec_here(home, project, fake_openai, capsys, monkeypatch)
            (project / "runs.txt").unlink(missing_ok=True)
            fake_openai.script.clear()
            fake_openai.add(tools([("call_a", "shell", {"command": "echo ran >> runs.txt"})]),
                            text("done"), text("resumed"), text("resumed"))  # fmt: skip
            filler = _fill(home, room * 1024) if real else None
            code, events, err = exec_("--approve", "all", "run it",
                                      full_at=0 if real else 21)  # fmt: skip
            assert code in (0, 1), (room, err)
            assert code == 0 or "disk is full" in err, (room, err)
            if filler is not None:
                filler.unlink()  # space is back
            sids = [e["session_id"] for e in events if e["event"] == "session"]
            if not sids:
                assert code == 1, (room, err)  # no room for the session itself
                shutil.rmtree(home)
                continue
            [path] = home.glob(f"history/*/session-*-{sids[0]}.jsonl")
            decided = {r.get("request_id") for r in read_all(path)[0]
                       if r["type"] == "approval_decision"}  # fmt: skip
            code, events, err = exec_("--session", sids[0], "--approve", "all", "go on")
            assert code == 0, (room, err)
            asked = [e for e in events if e["event"] == "approval_request"]
            assert not [e for e in asked if e["request_id"] in decided], (room, asked)
            records = read_all(path)[0]
            outcomes = Counter(r.get("call_id") for r in records if r["type"] == "tool_outcome")
            assert all(n == 1 for n in outcomes.values()), (room, outcomes)
            runs = (project / "runs.txt").read_text().count("ran") if (
                project / "runs.txt").exists() else 0
            assert runs <= 1, room
            ends = [e for e in events if e["event"] == "run_end"]
            assert ends and ends[-1]["status"] == "completed", (room, events)
            shutil.rmtree(home)  # room for the next case
    finally:
        if real:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
