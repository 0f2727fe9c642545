"""The checkpoint database: opening it safely and keeping it bounded.

LangGraph's SQLite saver stores the whole state in every checkpoint, so a
thread's checkpoints grow quadratically with its length. The saver opened here
stores each message of a thread once instead (:mod:`.message_saver`), and after
every tool step and every run we keep only the newest checkpoint of the thread
(and its pending writes: an approval's interrupt lives there) and delete the rest
with plain SQL (and the messages no checkpoint left refers to). That is
all resume needs: ``get_state`` reads the newest checkpoint, ``Command(resume=…)``
and ``update_state(as_node=…)`` continue from it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from mttui.session import checkpoint_store
from mttui.session.paths import FILE_MODE, ensure_dir, secure_file

BUSY_TIMEOUT_S = 10.0
WAL_LIMIT_BYTES = 4 * 1024 * 1024


def connect(path: Path) -> sqlite3.Connection:
    """A connection to ``checkpoints.sqlite`` (created 0600, WAL, busy timeout)."""
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    secure_file(path)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    # Pages freed by pruning go back to the file system (takes effect on a new file,
    # before the first table; an older file keeps reusing its free pages instead).
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL: a commit is in the WAL (safe from a killed process) without an fsync of its
    # own. The fsynced log is the record of truth: a checkpoint that lags it after a power
    # loss is the same case as a kill between a record and its checkpoint, which resume
    # mends. Five commits per tool step made the fsyncs the largest durable cost.
    conn.execute("PRAGMA synchronous=NORMAL")
    # The WAL is cut back to this size after each checkpoint of it, not left at its peak.
    conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
    return conn


def data_home(checkpoints_path: Path) -> Path | None:
    """The data home of ``<home>/history/<project>/checkpoints.sqlite`` (where the
    project's saved permission rules live), or ``None`` for a database elsewhere."""
    path = checkpoints_path
    return path.parents[2] if path.parent.parent.name == "history" else None


def open_saver(path: Path) -> Any:
    """A ``SqliteSaver`` on ``path`` (tables created) that stores each message of a
    thread once (:class:`~mttui.graph.message_saver.MessageSaver`)."""
    from .message_saver import MessageSaver

    saver = MessageSaver(connect(path))
    saver.setup()
    for suffix in ("-wal", "-shm"):
        secure_file(Path(str(path) + suffix))
    return saver


def prune_thread(saver: Any, thread_id: str, keep: int = 1) -> int:
    """Delete all but the newest ``keep`` checkpoints of ``thread_id``; returns how many went."""
    with saver.cursor() as cur:
        return checkpoint_store.prune_thread(cur, thread_id, keep)


def checkpoint_count(saver: Any, thread_id: str) -> int:
    with saver.cursor(transaction=False) as cur:
        return checkpoint_store.count(cur, thread_id)
