"""One writer per session, enforced across real processes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mttui.session.errors import SessionLocked
from mttui.session.lock import holder_pid
from mttui.session.reader import read_all
from mttui.session.service import SessionService
from tests.support.logs import message, new_session

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mttui.session.service import SessionService
    svc = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
    w = svc.open_session(Path(sys.argv[3]))
    w.append("transcript_message", message={"id": "msg-held", "role": "user",
             "content": "from the holder", "status": "sent"})
    print("ready", flush=True)
    sys.stdin.readline()
    w.close()
    """
)


def _make_session(home: Path, project: Path) -> Path:
    return new_session(SessionService(home, project),
                       [message("msg-1", "user", "hello", status="sent")],
                       provider="offline", model="offline").path


def test_second_writer_is_refused_with_holder_pid(home: Path, project: Path) -> None:
    path = _make_session(home, project)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home), str(project), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        before = path.read_bytes()
        svc = SessionService(home, project)
        with pytest.raises(SessionLocked) as err:
            svc.open_session(path)
        assert err.value.pid == proc.pid
        assert str(proc.pid) in str(err.value)
        assert path.read_bytes() == before  # nothing written by the refused writer
        assert holder_pid(path) == proc.pid
        records, stats = read_all(path)  # readers keep working
        assert [r["type"] for r in records][-1] == "transcript_message"
        assert stats.corrupt_lines == 0
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=10)
    assert holder_pid(path) is None
    w = SessionService(home, project).open_session(path)  # free again
    w.close()


def test_lock_released_when_holder_is_killed(home: Path, project: Path) -> None:
    path = _make_session(home, project)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home), str(project), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.kill()
    proc.wait(timeout=10)
    w = SessionService(home, project).open_session(path)
    w.append("session_end", stats={})
    w.close()
    assert [r["seq"] for r in read_all(path)[0]] == [1, 2, 3, 4]


def test_same_process_second_writer_refused(home: Path, project: Path) -> None:
    path = _make_session(home, project)
    svc = SessionService(home, project)
    first = svc.open_session(path)
    try:
        with pytest.raises(SessionLocked):
            svc.open_session(path)
    finally:
        first.close()


def test_files_0600_dirs_0700(home: Path, project: Path) -> None:
    path = _make_session(home, project)
    for p in [home, path.parent, path.parent.parent]:
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, p
    for p in path.parent.iterdir():
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p
    index = home / "index.sqlite"
    if index.exists():
        assert stat.S_IMODE(os.stat(index).st_mode) == 0o600
