"""Putting a rebuilt index in place: linked when there is no live index (no copy of
every page), copied in through SQLite when one exists or appears meanwhile."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from mttui.session.index import ingest, swap
from mttui.session.service import SessionService
from tests.support import logs


def _db(path: Path, table: str, rows: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"CREATE TABLE {table} (n INTEGER)")
    conn.executemany(f"INSERT INTO {table} VALUES (?)", [(i,) for i in range(rows)])
    conn.commit()
    conn.close()


def _rows(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_a_reindex_with_no_index_links_the_build_in_place(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    items = [logs.message(f"m{i}", "user", f"word{i} kept") for i in range(30)]
    ids = [logs.new_session(service, items).session_id for _ in range(3)]
    service.close()
    live = service.layout.index_path
    for suffix in ("", "-wal", "-shm"):
        Path(str(live) + suffix).unlink(missing_ok=True)
    seen: list[tuple[bool, int]] = []
    real = ingest.swap_in

    def spy(built: Path, to: Path) -> None:
        seen.append((to.exists(), built.stat().st_ino))
        real(built, to)

    monkeypatch.setattr(ingest, "swap_in", spy)
    again = SessionService(home, project)
    result = again.reindex()
    assert result.messages == 90
    [(existed, inode)] = seen
    assert not existed  # no empty index was made only to be copied over
    assert live.stat().st_ino == inode  # the build itself, not a copy
    assert not list(live.parent.glob(".index-rebuild-*"))
    assert {s.id for s in again.list_sessions().sessions} == set(ids)
    assert len(again.search("word7 kept", scope="all")) == 3


def test_stale_wal_files_of_a_deleted_index_are_not_read_into_the_new_one(
    tmp_path: Path,
) -> None:
    live, built = tmp_path / "index.sqlite", tmp_path / "built.sqlite"
    _db(live, "old", 10)
    conn = sqlite3.connect(live)  # leaves a WAL with frames in it
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.executemany("INSERT INTO old VALUES (?)", [(i,) for i in range(2000)])
    conn.commit()
    wal = Path(str(live) + "-wal").read_bytes()
    conn.close()
    live.unlink()  # deleted by hand, its WAL left behind
    Path(str(live) + "-wal").write_bytes(wal)
    _db(built, "new", 5)
    swap.swap_in(built, live)
    assert _rows(live, "new") == 5
    assert not built.exists()


def test_an_index_created_while_the_build_is_linked_is_copied_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, built = tmp_path / "index.sqlite", tmp_path / "built.sqlite"
    _db(built, "new", 7)
    opened: list[sqlite3.Connection] = []
    real_link = os.link

    def racing_link(src: Path, dst: Path) -> None:
        _db(live, "old", 3)  # another process creates the index and keeps it open
        opened.append(sqlite3.connect(live))
        assert opened[0].execute("SELECT count(*) FROM old").fetchone()[0] == 3
        real_link(src, dst)  # raises FileExistsError

    monkeypatch.setattr(swap.os, "link", racing_link)
    swap.swap_in(built, live)
    [other] = opened
    assert other.execute("SELECT count(*) FROM new").fetchone()[0] == 7  # sees the build
    other.close()
    assert _rows(live, "new") == 7
