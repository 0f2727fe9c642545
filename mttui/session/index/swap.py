"""Putting a rebuilt index in the live one's place."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def swap_in(built: Path, live: Path) -> None:
    """Replace the live index's content with ``built``.

    With no live index, ``built`` is linked in its place: nobody can have it open,
    and the link fails if somebody created it meanwhile (then it is copied as below).
    A live index is overwritten through SQLite's backup API (every page written to
    its WAL, then checkpointed), so that processes reading it see one or the other.
    """
    if not live.exists():
        for suffix in ("-wal", "-shm"):  # left by an index deleted by hand: stale
            Path(str(live) + suffix).unlink(missing_ok=True)
        try:
            os.link(built, live)
        except FileExistsError:
            pass  # created meanwhile: it may be open, so it is copied into
        except OSError:  # no hard links on this file system
            os.replace(built, live)
            return
        else:
            built.unlink()
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
