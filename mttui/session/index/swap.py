"""Putting a rebuilt index in the live one's place."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from . import users


def swap_in(built: Path, live: Path) -> None:
    """Replace the live index's content with ``built``.

    When nobody has the live index open (``users.alone``: nobody can open it either
    until this is done), ``built`` is renamed over it and the old WAL files removed
    (they would be read into the new file). Otherwise it is copied in through
    SQLite's backup API (every page written to the WAL, then checkpointed), so that
    processes reading it see one or the other.
    """
    conn = sqlite3.connect(built)  # WAL in its header, as the live index is opened
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    with users.alone(live) as alone:
        if alone:
            for suffix in ("-wal", "-shm"):
                Path(str(live) + suffix).unlink(missing_ok=True)
            os.replace(built, live)
            return
    src = sqlite3.connect(built)
    try:
        dst = sqlite3.connect(live, timeout=30)
        try:
            dst.execute("PRAGMA synchronous=NORMAL")  # as the index is always written
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=WAL")
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            dst.close()
            # An unreadable live index: nothing to preserve, replace the file itself.
            for suffix in ("-wal", "-shm"):
                Path(str(live) + suffix).unlink(missing_ok=True)
            os.replace(built, live)
            return
        dst.close()
    finally:
        src.close()
