"""The index connection of a service: opened lazily, reopened when the file changes,
let go of while a rebuild waits for it or while idle."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path

from ..disk import DISK_FULL_TEXT, disk_full
from ..errors import MttuiError
from ..paths import Layout
from ..warn import warn
from . import users
from .schema import connect
from .users import IDLE_SECONDS

# How often an open connection looks for a rebuild that waits for the index.
WANTED_POLL_SECONDS = 0.05


# SQLite's primary codes of a file that is in use or out of reach now (busy, locked,
# I/O, disk full, no permission): such an index may be somebody's live one.
_NOT_NOW = frozenset({
    sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM,
    sqlite3.SQLITE_READONLY, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_AUTH,
})


def _discardable(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the file itself is bad (no database, damaged, a schema
    that does not fit its version), so that it is rebuilt rather than an error."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "locked" not in str(exc) and "busy" not in str(exc)
    return code & 0xFF not in _NOT_NOW


def _not_now(exc: sqlite3.DatabaseError, path: Path) -> str:
    """The one-line error for an index that cannot be opened now; a full disk says so
    (SQLite reports a write that found no room as an I/O error as often as not)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if disk_full(exc) or code == sqlite3.SQLITE_IOERR and _little_room(path):
        return DISK_FULL_TEXT
    return f"the session index cannot be opened now: {exc}"


def _little_room(path: Path) -> bool:
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 1 << 20


class IndexFile:
    """One connection to ``layout.index_path``; :meth:`get` reopens it when the file
    is new, replaced (a rebuild installed by ``os.replace``) or unreadable.

    ``get`` and every use of its connection happen under ``lock`` (the owner's): while
    it is open, a watcher thread closes it as soon as a rebuild waits for the index
    (``users.wanted``), or once it has not been asked for in ``idle_seconds``
    (``None``: not for that), taking the same lock: so never under a use, and never between
    two ``get`` of one use (a caller may hold the connection across nested calls).
    It is reopened on the next ``get`` (after the rebuild, ``users.open_shared``);
    the same file reopened counts as not new.
    """

    def __init__(self, layout: Layout, lock: threading.RLock | None = None,
                 idle_seconds: float | None = IDLE_SECONDS) -> None:  # fmt: skip
        self.layout = layout
        self._lock = lock or threading.RLock()
        self._idle = idle_seconds
        self._conn: sqlite3.Connection | None = None
        self._ino: int | None = None
        self._let_go = False  # closed for being idle: the same file is not new
        self._used = 0.0
        self._watcher: threading.Thread | None = None
        # The open connection, also for a finalizer: an owner dropped without ``close``
        # lets go of the index at once (sqlite3 connections sit in reference cycles).
        self._open_now: list[sqlite3.Connection] = []
        # Not at exit: a worker thread may still be using it, and the OS lets go anyway.
        weakref.finalize(self, _close_all, self._open_now).atexit = False

    def get(self) -> tuple[sqlite3.Connection, bool]:
        """The connection, and whether it was opened on a file it had not seen."""
        with self._lock:
            self._used = time.monotonic()
            path = self.layout.index_path
            try:
                ino: int | None = path.stat().st_ino
            except FileNotFoundError:
                ino = None
            if self._conn is not None and ino == self._ino:
                return self._conn, False
            same = self._conn is None and self._let_go and ino is not None and ino == self._ino
            self.close()
            conn = self._open(path)
            self._conn, self._ino = conn, path.stat().st_ino
            self._open_now.append(conn)
            self._watch()
            return conn, not (same and self._ino == ino)

    def _open(self, path: Path) -> sqlite3.Connection:
        self.layout.ensure()
        try:
            return connect(path)
        except MttuiError:
            raise
        except sqlite3.DatabaseError as exc:
            if not _discardable(exc):  # busy, locked, an I/O error: maybe in use
                raise MttuiError(_not_now(exc, path)) from exc
            # The index is derived data: a broken one is discarded and rebuilt.
            warn(__name__, "discarding unreadable index (%s)", exc)
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            return connect(path)

    def swap_in(self, built: Path) -> None:
        """Put the rebuilt index ``built`` in place (``swap``), this connection closed
        first: open, it would keep the build from being renamed in."""
        from .swap import swap_in

        with self._lock:
            self.close()
            swap_in(built, self.layout.index_path)

    def close(self) -> None:
        with self._lock:
            self._let_go = False
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._open_now.clear()

    def _watch(self) -> None:
        if self._watcher is not None:
            return
        # The thread holds the owner weakly: a service dropped without ``close`` is not
        # kept alive (nor polled for) by its watcher; its connection closes with it.
        self._watcher = threading.Thread(
            target=_watch_until_let_go, args=(weakref.ref(self), self.layout.index_path),
            daemon=True, name="mttui-index-watch")  # fmt: skip
        self._watcher.start()

    def _due(self, wanted: bool) -> bool:
        idle = self._idle is not None and time.monotonic() - self._used >= self._idle
        return wanted or idle

    def let_go_if_due(self, wanted: bool) -> bool:
        """Close the connection if it is due (``wanted``: a rebuild waits for it); whether
        to go on watching. A connection closed by its owner ends the watch too."""
        if self._conn is not None and not self._due(wanted):
            return True
        if not self._lock.acquire(timeout=1.0):
            return True  # in use all along: look again
        try:
            if self._conn is not None and not self._due(wanted):
                return True  # used while this thread waited for the lock
            if self._conn is not None:
                self.close()
                self._let_go = True
            self._watcher = None  # under the lock: ``get`` starts the next one
            return False
        finally:
            self._lock.release()


def _close_all(conns: list[sqlite3.Connection]) -> None:
    for conn in conns:
        conn.close()
    conns.clear()


def _watch_until_let_go(owner: weakref.ref[IndexFile], path: Path) -> None:
    while True:
        wanted = users.wanted(path)
        index = owner()
        if index is None or not index.let_go_if_due(wanted):
            return
        del index  # not held while asleep
        time.sleep(WANTED_POLL_SECONDS)
