"""Staged delete: refusal when written, checkpoints of every thread, crash after each stage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mttui.session.delete import STAGES, SimulatedCrash, delete_session
from mttui.session.errors import SessionLocked, SessionNotFound
from mttui.session.index.ingest import session_row
from mttui.session.lock import lock_path_for
from mttui.session.service import SessionService


def _checkpoints(svc: SessionService, threads: list[str]) -> Path:
    """A database with SqliteSaver's two tables, as LangGraph lays them out."""
    path = svc.checkpoints_path()
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT "
        "NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, "
        "type TEXT, checkpoint BLOB, metadata BLOB, "
        "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT "
        "NULL DEFAULT '', checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT "
        "NULL, channel TEXT NOT NULL, type TEXT, value BLOB, "
        "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))"
    )
    for t in threads:
        conn.execute(
            "INSERT INTO checkpoints VALUES (?, '', 'c1', NULL, 'json', x'00', x'00')", (t,)
        )
        conn.execute(
            "INSERT INTO writes VALUES (?, '', 'c1', 'task', 0, 'ch', 'json', x'00')", (t,)
        )
    conn.commit()
    conn.close()
    return path


def _threads_left(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT thread_id FROM checkpoints UNION "
                                           "SELECT thread_id FROM writes")}  # fmt: skip
    finally:
        conn.close()


def _session(svc: SessionService) -> tuple[str, Path, list[str]]:
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "user", "content": "bye"})
        first = w.thread_id
        w.append("session_update", thread_id="thread-cleared")
        return w.session_id, w.path, [str(first), "thread-cleared"]


def test_delete_removes_file_lock_index_and_every_thread_checkpoint(svc: SessionService) -> None:
    sid, path, threads = _session(svc)
    db = _checkpoints(svc, [*threads, "someone-else"])
    svc.delete(sid)
    assert not path.exists() and not lock_path_for(path).exists()
    assert _threads_left(db) == {"someone-else"}
    assert svc.list_sessions().sessions == []
    assert svc.search("bye") == []
    with pytest.raises(SessionNotFound):
        svc.get(sid)


def test_delete_refuses_while_another_writer_holds_the_lock(svc: SessionService) -> None:
    writer = svc.create_session(provider="p", model="m")
    db = _checkpoints(svc, [str(writer.thread_id)])
    try:
        with pytest.raises(SessionLocked):
            svc.delete(writer.session_id)
        assert writer.path.exists()
        assert _threads_left(db) == {writer.thread_id}
        assert svc.get(writer.session_id).id == writer.session_id
    finally:
        writer.close()


@pytest.mark.parametrize("content", [None, b"this is not a database" * 100])
def test_delete_works_with_missing_or_corrupt_checkpoints(
    svc: SessionService, content: bytes | None
) -> None:
    sid, path, _ = _session(svc)
    if content is not None:
        svc.checkpoints_path().write_bytes(content)
    svc.delete(sid)
    assert not path.exists() and svc.list_sessions().sessions == []


@pytest.mark.parametrize("stage", STAGES)
def test_crash_after_each_stage_is_finished_by_the_next_catch_up(
    svc: SessionService, home: Path, project: Path, stage: str
) -> None:
    sid, path, threads = _session(svc)
    db = _checkpoints(svc, threads)
    conn = svc._db()
    row = session_row(conn, sid)
    assert row is not None
    with pytest.raises(SimulatedCrash):
        delete_session(conn, svc.layout, row, crash_after=stage)
    svc.close()
    # Whatever state the crash left, the session is already hidden from readers ...
    fresh = SessionService(home, project)
    assert fresh.list_sessions().sessions == []
    # ... and the catch-up of any later process finished the delete.
    assert not path.exists() and not lock_path_for(path).exists()
    assert _threads_left(db) == set()
    assert session_row(fresh._db(), sid) is None


def test_reindex_finishes_a_half_done_delete(svc: SessionService) -> None:
    sid, path, threads = _session(svc)
    db = _checkpoints(svc, threads)
    conn = svc._db()
    row = session_row(conn, sid)
    assert row is not None
    with pytest.raises(SimulatedCrash):
        delete_session(conn, svc.layout, row, crash_after="mark")
    assert svc.reindex().sessions == 0
    assert not path.exists() and _threads_left(db) == set()
