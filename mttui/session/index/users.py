"""Who has the live index open: one shared ``flock`` on ``index.sqlite.lock`` per
connection, taken before it opens and let go once it is closed.

A rebuild may rename its build over the live index only when nobody has it open:
a process that has it open keeps writing the old file and its WAL, and one that
opens it meanwhile could tie the old WAL to the new file (SQLite finds a WAL by its
name). So every connection to the live index is opened under the shared lock, and
a rebuild asks for it exclusively (:func:`alone`): if it gets it, nobody has the
index open and nobody can open it until the rename is done; if not, the build is
copied into the live file through SQLite (``swap``).

So that holders do not cost a rebuild the copy, a rebuild that does not get the lock
at once says that it waits for it in ``index.sqlite.wanted`` (its pid) while it asks
again for a moment: a service that has the index open looks for that file while it
does (``handle``, 20 times a second) and closes its connection between two uses, and
every opener waits until the file is gone (:func:`open_shared`). A service also
closes a connection it has not used for ``IDLE_SECONDS``.
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

# How long a service keeps the index open after its last use: reopened, SQLite's page
# cache is cold (a search of a common term takes twice as long).
IDLE_SECONDS = 30.0
# How long an opener waits at most for a rebuild that says it wants the index.
STEP_ASIDE_SECONDS = 3.0
STALE_WISH_SECONDS = 30.0  # a wish written longer ago is a killed rebuild's


def lock_path(index: Path) -> Path:
    return index.with_name(index.name + ".lock")


def wanted_path(index: Path) -> Path:
    return index.with_name(index.name + ".wanted")


def wanted(index: Path) -> bool:
    """Whether a live rebuild waits for the users of ``index`` to let go of it."""
    try:
        fd = os.open(wanted_path(index), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False  # the usual case: one failed open
    try:
        pid = os.read(fd, 32).strip()
        written = os.fstat(fd).st_mtime
    finally:
        os.close(fd)
    # a rebuild waits seconds at most: an older wish is a killed one's (its pid reused)
    fresh = time.time() - written < STALE_WISH_SECONDS
    return fresh and pid.isdigit() and alive(int(pid))


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or no such number: leave it
    return True


def _await_rebuild(index: Path) -> None:
    # bounded: a rebuild asks for the lock no longer than LET_GO (swap), and a pid
    # that dies or is reused must not hold openers back for long
    deadline = time.monotonic() + STEP_ASIDE_SECONDS
    while wanted(index) and time.monotonic() < deadline:
        time.sleep(0.01)


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
    the shared lock, waiting while a rebuild waits for the index or renames its build
    into place."""
    _await_rebuild(index)
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
        if not _take(fd, index, time.monotonic() + wait):
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _take(fd: int, index: Path, deadline: float) -> bool:
    if _try(fd):
        return True
    if time.monotonic() >= deadline:
        return False
    wish = wanted_path(index)
    with contextlib.suppress(OSError):  # a read-only home: idle users still let go
        fd_w = os.open(wish, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
        try:
            os.write(fd_w, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd_w)
    try:
        # polled: a blocking flock cannot be given a timeout
        while not _try(fd):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True
    finally:
        wish.unlink(missing_ok=True)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
