"""LangGraph's checkpoint tables (``checkpoints`` and ``writes`` in ``checkpoints.sqlite``).

The one module that runs SQL against them: the light reader's rows, which
threads have a checkpoint, pruning a thread to its newest checkpoints, and
deleting every row of a session's threads. Plain ``sqlite3``, so none of it
needs LangGraph; the graph passes its saver's cursor to prune.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from . import checkpoint_messages

log = logging.getLogger(__name__)

# (checkpoint_id, type, checkpoint, metadata) and (task_id, channel, type, value, task_path, idx)
CheckpointRow = tuple[str, str, bytes, bytes | None]
WriteRow = tuple[str, str, str, bytes, str, int]


def connect_read_only(db_path: Path) -> sqlite3.Connection | None:
    """The database opened ``mode=ro``, or ``None`` when there is none (nothing is created)."""
    if not db_path.exists():
        return None  # and it stays missing
    try:
        return sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None


def newest_checkpoint(
    db_path: Path, thread_id: str
) -> tuple[CheckpointRow, list[WriteRow], list[tuple[str, bytes]]] | None:
    """The newest root checkpoint row of ``thread_id``, its writes and the serialized
    messages it refers to (none for one holding them inline), read in one transaction
    (a commit cannot split them); ``None`` without file or thread. SQL errors and a
    missing message propagate."""
    if not db_path.exists():
        return None  # (connecting would create it)
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    try:
        conn.execute("BEGIN")
        row = conn.execute(
            "SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE "
            "thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_id,)).fetchone()  # fmt: skip
        if row is None:
            return None
        writes = conn.execute(
            "SELECT task_id, channel, type, value, task_path, idx FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            (thread_id, row[0])).fetchall()  # fmt: skip
        refs = checkpoint_messages.refs_of(row[1], row[2]) or []
        messages = checkpoint_messages.load(conn.cursor(), thread_id, refs) if refs else []
        return row, writes, messages
    finally:
        conn.close()  # (ends the read transaction; nothing was written)


def has_thread(db_path: Path, thread_id: str) -> bool:
    """Whether the database holds a checkpoint of ``thread_id`` (read-only)."""
    conn = connect_read_only(db_path)
    if conn is None:
        return False
    try:
        row = conn.execute(
            "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (thread_id,)
        ).fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None


def thread_ids(db_path: Path) -> set[str]:
    """Every thread id with a checkpoint in the database (read-only; empty if none)."""
    conn = connect_read_only(db_path)
    if conn is None:
        return set()
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    except sqlite3.Error:
        return set()
    finally:
        conn.close()


def prune_thread(cur: sqlite3.Cursor, thread_id: str, keep: int = 1) -> int:
    """Delete all but the newest ``keep`` checkpoints of ``thread_id`` (per namespace)
    and their writes; returns how many went. The caller commits.

    Checkpoint ids are time-ordered (uuid6), so "newest" is the largest id.
    """
    cur.execute(
        "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? "
        "ORDER BY checkpoint_id DESC",
        (thread_id,),
    )
    rows = cur.fetchall()
    kept_per_ns: dict[str, int] = {}
    doomed: list[tuple[str, str]] = []
    for ns, cid in rows:
        kept_per_ns[ns] = kept_per_ns.get(ns, 0) + 1
        if kept_per_ns[ns] > keep:
            doomed.append((ns, cid))
    stored = checkpoint_messages.has_table(cur)
    candidates: set[bytes] = set()
    for ns, cid in doomed:
        if stored:  # the messages this checkpoint refers to (kept if another one does)
            cur.execute(
                "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND "
                "checkpoint_ns = ? AND checkpoint_id = ?", (thread_id, ns, cid))  # fmt: skip
            for type_, blob in cur.fetchall():
                candidates.update(checkpoint_messages.refs_of(type_, blob) or ())
        cur.execute(
            "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, ns, cid),
        )
        cur.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND checkpoint_id = ?",
            (thread_id, ns, cid),
        )
    checkpoint_messages.drop_unreferenced(cur, thread_id, candidates)
    if doomed:
        # Give the freed pages back (a no-op unless the file has auto_vacuum=INCREMENTAL).
        cur.execute("PRAGMA incremental_vacuum")
        cur.fetchall()
    return len(doomed)


def count(cur: sqlite3.Cursor, thread_id: str) -> int:
    """How many checkpoints ``thread_id`` has."""
    cur.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread_id,))
    return int(cur.fetchone()[0])


def delete_threads(db_path: Path, threads: list[str]) -> None:
    """Remove every row of the given threads from both tables.

    A missing or unreadable database is not an error: the session must stay deletable.
    """
    if not threads or not db_path.exists():
        return
    marks = ",".join("?" * len(threads))
    try:
        conn = sqlite3.connect(db_path, timeout=5)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            with conn:
                for table in ("checkpoints", "writes", checkpoint_messages.TABLE):
                    if table in tables:
                        conn.execute(f"DELETE FROM {table} WHERE thread_id IN ({marks})", threads)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        log.warning("checkpoints of %s not deleted: %s", db_path.name, exc)
