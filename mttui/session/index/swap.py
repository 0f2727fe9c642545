"""Putting a rebuilt index in the live one's place."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import MttuiError
from . import users

# How long a copy waits for another process's write to the live index to end.
BUSY_SECONDS = 30.0
# How long a rebuild waits at most for the processes that have the index open to let
# go of it (they look 20 times a second whether it waits, and let go between two uses)
# before it copies its build in; never longer than the copy would take (measured
# 1.0-1.5 s for 256 MB here).
LET_GO_SECONDS = 1.0
COPY_BYTES_PER_SECOND = 200e6


def swap_in(built: Path, live: Path) -> None:
    """Replace the live index's content with ``built``.

    When nobody has the live index open, or nobody does after ``LET_GO_SECONDS`` or
    the time the copy would take, if shorter (``users.alone``: nobody can open it
    either until this is done), ``built`` is renamed over it and the old WAL files
    removed (they would be read into the new file). Otherwise it is copied in through
    SQLite's backup API (every page written to the WAL, then checkpointed), so that
    processes reading it see one or the other. A live index that is not a database
    at all is replaced; one that stays busy past ``BUSY_SECONDS`` is left as it was
    (an error says so): renamed under the processes that have it open, their WAL
    would be tied to the new file.
    """
    size = _page_size(live)
    conn = sqlite3.connect(built)
    try:
        if size is not None and size != _page_size(built):
            # a WAL database takes pages of its own size only (an index made elsewhere)
            conn.execute("PRAGMA journal_mode=DELETE")  # a page size changes outside WAL
            conn.execute(f"PRAGMA page_size={size}")
            conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode=WAL")  # in its header, as the live index is opened
    finally:
        conn.close()
    wait = min(LET_GO_SECONDS, built.stat().st_size / COPY_BYTES_PER_SECOND)
    with users.alone(live, wait) as alone:
        if alone:
            _replace(built, live)
            return
    src = sqlite3.connect(built)
    try:
        dst = sqlite3.connect(live, timeout=BUSY_SECONDS)
        try:
            dst.execute("PRAGMA synchronous=NORMAL")  # as the index is always written
            src.backup(dst, progress=_give_up_after(BUSY_SECONDS), sleep=0.05)
            dst.execute("PRAGMA journal_mode=WAL")
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:  # busy, read-only: it is a database
            hint = "; try again once other mttui processes are idle" if "locked" in str(exc) else ""
            raise MttuiError(f"the index could not be replaced ({exc}){hint}") from exc
        except sqlite3.DatabaseError:
            dst.close()
            # An unreadable live index: nothing to preserve, replace the file itself.
            _replace(built, live)
            return
        finally:
            dst.close()
    finally:
        src.close()


class _StillBusy(sqlite3.OperationalError):
    pass


def _give_up_after(seconds: float) -> Callable[[int, int, int], None]:
    """A backup's progress callback that ends it once the destination has been busy
    for ``seconds``: Python's backup retries a busy step for ever."""
    deadline = time.monotonic() + seconds

    def progress(status: int, remaining: int, total: int) -> None:
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) and time.monotonic() > deadline:
            raise _StillBusy("database is locked")

    return progress


def _replace(built: Path, live: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(str(live) + suffix).unlink(missing_ok=True)
    os.replace(built, live)


def _page_size(path: Path) -> int | None:
    """The page size in an SQLite file's header, ``None`` if it has none."""
    try:
        with path.open("rb") as f:
            head = f.read(18)
    except OSError:
        return None
    if len(head) < 18 or not head.startswith(b"SQLite format 3\0"):
        return None
    size = int.from_bytes(head[16:18], "big")
    return 65536 if size == 1 else size
