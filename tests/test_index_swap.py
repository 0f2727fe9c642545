"""Putting a rebuilt index in place: renamed over the live one when nobody has it
open (no copy of every page), also once the processes that had it open let go of it
while idle; copied in through SQLite while another process keeps using it. Every
opener of the live index holds a shared lock that makes the difference; a process in
the middle of using it lets go when a rebuild says it waits for the lock."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mttui.session.index import swap, users
from mttui.session.index.schema import connect, open_read_only
from mttui.session.service import SessionService
from tests.support import logs

ROOT = Path(__file__).resolve().parents[1]

# Another process that opens the index as mttui does, and then sits idle (or, given
# "busy", keeps reading it; given "raw", holds a connection that never lets go) until
# it is told to go on (a line on stdin) or killed; then it prints the messages it
# sees in its one session.
OTHER = r"""
import sys, threading, time
from pathlib import Path
from mttui.session.service import SessionService
service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
[info] = service.list_sessions().sessions
stop = threading.Event()
def keep_reading():
    while not stop.is_set():
        service.get(info.id)
        time.sleep(0.02)
if sys.argv[3:] == ["busy"]:
    threading.Thread(target=keep_reading, daemon=True).start()
if sys.argv[3:] == ["raw"]:  # a connection of its own, which never lets go
    from mttui.session.index.schema import connect
    raw = connect(service.layout.index_path)
print("open", flush=True)
sys.stdin.readline()
stop.set()
print(service.get(info.id).message_count, flush=True)
"""


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """(live index there, the build's inode) of each swap."""
    seen: list[tuple[bool, int]] = []
    real = swap.swap_in

    def spy(built: Path, live: Path) -> None:
        seen.append((live.exists(), built.stat().st_ino))
        real(built, live)

    monkeypatch.setattr(swap, "swap_in", spy)
    return seen


def _session(service: SessionService, n: int = 30) -> str:
    items = [logs.message(f"m{i}", "user", f"word{i} kept") for i in range(n)]
    return logs.new_session(service, items).session_id


def test_a_reindex_nobody_else_has_open_renames_its_build_in(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    ids = {_session(service) for _ in range(3)}
    live = service.layout.index_path
    before = live.stat().st_ino
    seen = _spy(monkeypatch)
    assert service.reindex().messages == 90  # its own connection was open: closed first
    [(existed, inode)] = seen
    assert existed and live.stat().st_ino == inode != before  # the build itself
    assert not Path(str(live) + "-wal").exists() or Path(str(live) + "-wal").stat().st_size == 0
    assert {s.id for s in service.list_sessions().sessions} == ids  # reopened
    assert len(service.search("word7 kept", scope="all")) == 3
    assert not list(live.parent.glob(".index-rebuild-*"))


def test_a_reindex_with_no_index_makes_none_to_copy_over(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    sid = _session(service)
    service.close()
    live = service.layout.index_path
    for suffix in ("", "-wal", "-shm"):
        Path(str(live) + suffix).unlink(missing_ok=True)
    seen = _spy(monkeypatch)
    again = SessionService(home, project)
    assert again.reindex().messages == 30
    [(existed, inode)] = seen
    assert not existed and live.stat().st_ino == inode
    assert [s.id for s in again.list_sessions().sessions] == [sid]


def _other(home: Path, project: Path, *how: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen([sys.executable, "-c", OTHER, str(home), str(project), *how],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=env)  # fmt: skip
    assert other.stdout is not None
    assert other.stdout.readline().strip() == "open"
    return other


def _late_line(service: SessionService, sid: str) -> None:
    """A line the other process's index has not seen, in the log only."""
    path = service.layout.history_root.glob(f"*/*{sid}*.jsonl").__next__()
    writer = service.open_session(path)
    writer.append("transcript_message", message={"id": "late", "role": "user",
                                                  "content": "late"})  # fmt: skip
    writer.close()
    service.close()  # this one has no connection open now; the other process has


def _go_on(other: subprocess.Popen[str]) -> str:
    assert other.stdout is not None and other.stdin is not None
    other.stdin.write("go on\n")
    other.stdin.flush()
    line = other.stdout.readline().strip()
    assert other.wait(30) == 0
    return line


@pytest.mark.parametrize("how", ["raw", "busy", "idle"])
def test_copied_in_under_a_process_holding_the_index_renamed_in_once_it_lets_go(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    service = SessionService(home, project)
    sid = _session(service, 10)
    service.close()
    # a rebuild waits no longer than its copy would take: here as long as idle takes
    monkeypatch.setattr(swap, "COPY_BYTES_PER_SECOND", 1.0)
    other = _other(home, project, how)
    try:
        _late_line(service, sid)
        live = service.layout.index_path
        before = live.stat().st_ino
        with users.alone(live) as alone:
            assert not alone  # it has the index open
        seen = _spy(monkeypatch)
        again = SessionService(home, project)
        assert again.reindex().messages == 11
        [(_, built)] = seen
        if how == "raw":
            assert live.stat().st_ino == before != built  # copied into the open file
        else:  # it let go of the index: idle, or at its next use while the rebuild waited
            assert live.stat().st_ino == built
        assert not users.wanted_path(live).exists()
        assert _go_on(other) == "11"  # its connection sees the build either way
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert again.reindex().messages == 11  # nobody has it open any more: renamed in
    assert live.stat().st_ino == seen[-1][1]


def test_a_killed_process_that_had_the_index_open_does_not_keep_it_copied(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    _session(service, 5)
    service.close()
    other = _other(home, project, "raw")
    live = service.layout.index_path
    with users.alone(live) as alone:
        assert not alone
    other.send_signal(signal.SIGKILL)
    other.wait()
    seen = _spy(monkeypatch)
    assert SessionService(home, project).reindex().messages == 5
    assert live.stat().st_ino == seen[-1][1]


def test_an_opener_waits_while_a_rebuild_has_the_index_alone(tmp_path: Path) -> None:
    live = tmp_path / "index.sqlite"
    connect(live).close()
    opened = threading.Event()
    conns: list[sqlite3.Connection] = []

    def open_it() -> None:
        conns.append(connect(live))
        opened.set()

    with users.alone(live) as alone:
        assert alone
        thread = threading.Thread(target=open_it, daemon=True)
        thread.start()
        assert not opened.wait(0.3)  # held back until the rename is done
    assert opened.wait(10)
    thread.join()
    with users.alone(live) as alone:
        assert not alone  # open now (another open file of this process counts too)
        reader = open_read_only(live)
    conns[0].close()
    with users.alone(live) as alone:
        assert not alone  # the reader still has it
    reader.close()
    with users.alone(live) as alone:
        assert alone


def test_stale_wal_files_of_an_old_index_are_not_read_into_the_new_one(
    tmp_path: Path,
) -> None:
    live, built = tmp_path / "index.sqlite", tmp_path / "built.sqlite"
    conn = sqlite3.connect(live)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE old (n INTEGER)")
    conn.executemany("INSERT INTO old VALUES (?)", [(i,) for i in range(2000)])
    conn.commit()
    wal = Path(str(live) + "-wal").read_bytes()
    conn.close()  # a crash would have left its WAL: put it back
    Path(str(live) + "-wal").write_bytes(wal)
    conn = sqlite3.connect(built)
    conn.execute("CREATE TABLE new (n INTEGER)")
    conn.executemany("INSERT INTO new VALUES (?)", [(i,) for i in range(5)])
    conn.commit()
    conn.close()
    swap.swap_in(built, live)
    conn = sqlite3.connect(live)
    assert conn.execute("SELECT count(*) FROM new").fetchone()[0] == 5
    conn.close()
    assert not built.exists()


def _page_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def test_a_live_index_of_another_page_size_held_open_is_still_copied_in(
    home: Path, project: Path
) -> None:
    service = SessionService(home, project)
    sid = _session(service, 12)
    service.close()
    live = service.layout.index_path
    conn = sqlite3.connect(live)  # as another SQLite's default would have made it
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA page_size=8192")
    conn.execute("VACUUM")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert _page_size(live) == 8192
    reader = open_read_only(live)  # somebody has it open: no rename
    try:
        before = live.stat().st_ino
        conn = connect(live)
        conn.execute("DELETE FROM messages")  # what only a rebuild puts back
        conn.close()
        assert service.reindex().messages == 12
        assert live.stat().st_ino == before  # copied into the open file, not renamed
        assert reader.execute("SELECT count(*) FROM messages").fetchone()[0] == 12
    finally:
        reader.close()
    assert _page_size(live) == 8192
    assert [s.id for s in SessionService(home, project).list_sessions().sessions] == [sid]


def test_a_live_index_kept_busy_is_left_as_it_was_with_a_one_line_error(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mttui.session.errors import MttuiError

    service = SessionService(home, project)
    _session(service, 7)
    service.close()
    live = service.layout.index_path
    before = live.stat().st_ino
    writer = connect(live)  # another process in the middle of a write
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE sessions SET title = 'mine'")
    monkeypatch.setattr(swap, "BUSY_SECONDS", 0.2)
    try:
        with pytest.raises(MttuiError, match="could not be replaced") as caught:
            service.reindex()
        assert "\n" not in str(caught.value) and "try again" in str(caught.value)
        assert live.stat().st_ino == before  # not renamed under the writer
        writer.execute("COMMIT")  # its write stands
    finally:
        writer.close()
    conn = sqlite3.connect(live)
    assert {r[0] for r in conn.execute("SELECT title FROM sessions")} == {"mine"}
    conn.close()
    assert not list(live.parent.glob(".index-rebuild-*"))
    assert service.reindex().messages == 7  # nobody has it open now: renamed in


def test_a_small_build_waits_for_nobody_longer_than_its_copy_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, built = tmp_path / "index.sqlite", tmp_path / "built.sqlite"
    connect(live).close()
    connect(built, bulk=True).close()
    waits: list[float] = []
    real = users.alone

    def spy(index: Path, wait: float = 0.0):  # type: ignore[no-untyped-def]
        waits.append(wait)
        return real(index, wait)

    monkeypatch.setattr(users, "alone", spy)
    held = connect(live)  # never lets go
    try:
        size = built.stat().st_size
        swap.swap_in(built, live)
    finally:
        held.close()
    assert waits == [pytest.approx(size / swap.COPY_BYTES_PER_SECOND)]
    assert waits[0] < swap.LET_GO_SECONDS


def test_an_opener_waits_while_a_live_rebuild_wants_the_index(tmp_path: Path) -> None:
    live = tmp_path / "index.sqlite"
    connect(live).close()
    wish = users.wanted_path(live)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for stale in (f"{dead.pid}\n", "garbage", ""):  # a killed rebuild's wish, or junk
        wish.write_text(stale)
        assert not users.wanted(live)
        connect(live).close()  # not held back
    wish.write_text(f"{os.getpid()}\n")
    long_ago = time.time() - 2 * users.STALE_WISH_SECONDS
    os.utime(wish, (long_ago, long_ago))
    assert not users.wanted(live)  # a killed rebuild's, its pid taken by another process
    wish.write_text(f"{os.getpid()}\n")
    assert users.wanted(live)
    opened = threading.Event()
    conns: list[sqlite3.Connection] = []

    def open_it() -> None:
        conns.append(connect(live))
        opened.set()

    thread = threading.Thread(target=open_it, daemon=True)
    thread.start()
    assert not opened.wait(0.3)  # held back until the rebuild is done waiting
    wish.unlink()
    assert opened.wait(10)
    thread.join()
    conns[0].close()
