"""The index file: migrations, permissions, a newer or broken index, concurrent catch-ups."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from mttui.session.errors import IndexTooNew, MttuiError
from mttui.session.index import schema
from mttui.session.index.schema import SCHEMA_VERSION, connect
from mttui.session.service import SessionService
from tests.support.resume import cli


def test_fresh_index_is_migrated_wal_and_private(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "messages_fts", "approvals", "pending"} <= tables
    conn.close()
    assert path.stat().st_mode & 0o777 == 0o600
    connect(path).close()  # idempotent: migrating again changes nothing


def test_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(MttuiError, match="newer mttui"):
        connect(path)


def test_reindex_replaces_an_index_of_a_newer_mttui(home: Path, project: Path) -> None:
    """The refusal says to run `mttui reindex`: that must work on such an index."""
    svc = SessionService(home, project)
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "user", "content": "kept"})
    svc.close()
    raw = sqlite3.connect(svc.layout.index_path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    refused = cli(home, project, "sessions")
    assert refused.returncode == 1 and "run `mttui reindex`" in refused.stderr
    with pytest.raises(IndexTooNew):
        SessionService(home, project).list_sessions()
    done = cli(home, project, "reindex")
    assert done.returncode == 0, done.stderr
    again = SessionService(home, project)
    [info] = again.list_sessions().sessions
    assert info.message_count == 1 and [h.message_id for h in again.search("kept")] == ["a"]
    conn = sqlite3.connect(svc.layout.index_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_unreadable_index_is_discarded_and_rebuilt(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "user", "content": "kept"})
    svc.close()
    svc.layout.index_path.write_bytes(b"this is not an SQLite database at all" * 200)
    again = SessionService(home, project)
    [info] = again.list_sessions().sessions
    assert info.message_count == 1 and again.search("kept")


def test_reindex_replaces_content_under_an_open_connection(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    other = SessionService(home, project)
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "user", "content": "x"})
    assert len(other.list_sessions().sessions) == 1
    calls: list[tuple[int, int]] = []
    result = svc.reindex(lambda done, total: calls.append((done, total)))
    assert (result.sessions, result.messages, result.corrupt_lines) == (1, 1, 0)
    assert calls and calls[-1][0] == calls[-1][1]
    assert set(result.as_json()) == {"sessions", "messages", "corrupt_lines", "seconds"}
    assert other.get(w.session_id).message_count == 1  # the other connection still works


def _catch_up(home: str, project: str) -> None:
    SessionService(Path(home), Path(project)).catch_up()


def test_concurrent_catch_ups_ingest_each_record_once(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    ids = []
    for _ in range(6):
        with svc.create_session(provider="p", model="m") as w:
            w.append_many(
                ("transcript_message", {"message": {"id": f"m{i}", "role": "user", "content": "t"}})
                for i in range(300)
            )
            ids.append(w.session_id)
    svc.close()
    svc.layout.index_path.unlink()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_catch_up, args=(str(home), str(project))) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    fresh = SessionService(home, project)
    assert sorted(s.message_count for s in fresh.list_sessions().sessions) == [300] * 6
    count = fresh._db().execute("SELECT count(*) FROM messages").fetchone()[0]
    assert count == 1800


def test_a_busy_index_is_an_error_not_discarded(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only a broken file is derived data to throw away: one that another connection
    # holds locked (here while it would be migrated) is somebody's live index.
    svc = SessionService(home, project)
    svc.layout.ensure()
    path = svc.layout.index_path
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE kept (x)")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 50)
    try:
        with pytest.raises(MttuiError, match="cannot be opened now: database is locked"):
            svc.list_sessions()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM kept").fetchone() == (0,)  # the same file
    conn.close()
    assert svc.list_sessions().sessions == []  # once it is free, it opens and migrates
