"""Who has the live index open: one shared ``flock`` on ``index.sqlite.lock`` per
connection, taken before it opens and let go once it is closed.

A rebuild may rename its build over the live index only when nobody has it open:
a process that has it open keeps writing the old file and its WAL, and one that
opens it meanwhile could tie the old WAL to the new file (SQLite finds a WAL by its
name). So every connection to the live index is opened under the shared lock, and
a rebuild asks for it exclusively, without waiting (:func:`alone`): if it gets it,
nobody has the index open and nobody can open it until the rename is done; if not,
the build is copied into the live file through SQLite (``swap``).

A service lets go of its connection once it has not used it for ``IDLE_SECONDS``
(``handle``), and a rebuild waits that long for the lock before it copies: so a
process that sits idle (a TUI nobody types into) does not cost a rebuild the copy.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..paths import FILE_MODE

# How long a service keeps the index open after its last use (see above).
IDLE_SECONDS = 1.0


def lock_path(index: Path) -> Path:
    return index.with_name(index.name + ".lock")


class HeldConnection(sqlite3.Connection):
    """A connection to the live index that holds the shared lock while it is open."""

    users_fd = -1

    def close(self) -> None:
        try:
            super().close()  # first: a last connection's close checkpoints its WAL
        finally:
            fd, self.users_fd = self.users_fd, -1
            if fd >= 0:
                os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # a close another thread's check refuses
            self.close()


def _open_lock(index: Path) -> int | None:
    """The lock file, opened (created if need be); ``None`` if it cannot be: then
    nobody can create it to rename over the index either (a read-only home)."""
    path = lock_path(index)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except OSError:
        try:
            return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None


def open_shared(index: Path, opener: Callable[[], HeldConnection]) -> HeldConnection:
    """``opener()`` (which opens ``index`` with ``factory=HeldConnection``) run under
    the shared lock, waiting while a rebuild renames its build into place."""
    fd = _open_lock(index)
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        conn = opener()
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    conn.users_fd = -1 if fd is None else fd
    return conn


@contextlib.contextmanager
def alone(index: Path, wait: float = 0.0) -> Iterator[bool]:
    """``True`` while nobody has ``index`` open and nobody can open it (the lock held
    exclusively); ``False`` if somebody still has it open after ``wait`` seconds."""
    fd = _open_lock(index)
    if fd is None:
        yield False
        return
    try:
        if not _take(fd, time.monotonic() + wait):
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _take(fd: int, deadline: float) -> bool:
    # polled: a blocking flock cannot be given a timeout, and openers queue behind none
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
