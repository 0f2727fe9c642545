"""Staged delete (storage.md): a crash at any point leaves the session intact or gone.

Stages, in order: take the session's write lock (refuse if another process holds
it) and mark the session ``deleting`` in the index; delete the checkpoints of
every thread the session ever had; unlink the JSONL (and its lock file); remove
the index rows last. A catch-up that finds a ``deleting`` mark runs the
remaining stages again (each one is idempotent).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3

from . import checkpoint_store
from .index.ingest import ingest_file, remove_session_rows, session_row, transaction
from .index.schema import SessionRow
from .lock import SessionLock, SessionLocked, is_locked, lock_path_for
from .paths import Layout

log = logging.getLogger(__name__)

STAGES = ("mark", "checkpoints", "unlink", "index")


class SimulatedCrash(Exception):
    """Raised by ``crash_after`` in tests, standing in for a process killed mid-delete."""


def delete_session(
    conn: sqlite3.Connection,
    layout: Layout,
    row: SessionRow,
    *,
    crash_after: str | None = None,
) -> None:
    """Run (or finish) the staged delete of one indexed session.

    Raises ``SessionLocked`` when another process writes the session.
    """
    path = layout.history_root / row["path"]
    lock = SessionLock(path)
    if path.exists():
        lock.acquire()
    try:
        if lock.held:
            # Ingest the last records first: a late session_update may name a thread.
            ingest_file(conn, layout, path, tail_is_final=True)
        with transaction(conn):
            conn.execute("UPDATE sessions SET deleting = 1 WHERE sess = ?", (row["sess"],))
        _maybe_crash(crash_after, "mark")
        threads = [
            r[0]
            for r in conn.execute("SELECT thread_id FROM threads WHERE sess = ?", (row["sess"],))
        ]
        if row.get("thread_id") and row["thread_id"] not in threads:
            threads.append(row["thread_id"])
        checkpoint_store.delete_threads(layout.checkpoints_path(row["project_hash"]), threads)
        _maybe_crash(crash_after, "checkpoints")
        path.unlink(missing_ok=True)
        _maybe_crash(crash_after, "unlink")
    finally:
        lock.release()
    with contextlib.suppress(FileNotFoundError):
        if not path.exists():
            lock_path_for(path).unlink()
    with transaction(conn):
        remove_session_rows(conn, row["sess"])
    _maybe_crash(crash_after, "index")


def finish_delete(conn: sqlite3.Connection, layout: Layout, row: SessionRow) -> None:
    """Complete a delete found half-done; leave it while someone writes the file."""
    path = layout.history_root / row["path"]
    if path.exists() and is_locked(path):
        return
    try:
        delete_session(conn, layout, row)
    except SessionLocked:
        log.info("delete of %s postponed: the session is open for writing", row["id"])


def finish_all(conn: sqlite3.Connection, layout: Layout) -> None:
    """Complete every delete found half-done (a rebuild from the logs would bring
    their sessions back)."""
    for (sid,) in conn.execute("SELECT id FROM sessions WHERE deleting = 1").fetchall():
        row = session_row(conn, sid)
        if row is not None:
            finish_delete(conn, layout, row)


def _maybe_crash(crash_after: str | None, stage: str) -> None:
    if crash_after == stage:
        raise SimulatedCrash(stage)
