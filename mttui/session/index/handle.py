"""The index connection of a service: opened lazily, reopened when the file changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import MttuiError
from ..paths import Layout
from ..warn import warn
from .schema import connect


class IndexFile:
    """One connection to ``layout.index_path``; :meth:`get` reopens it when the file
    is new, replaced (a rebuild installed by ``os.replace``) or unreadable."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._conn: sqlite3.Connection | None = None
        self._ino: int | None = None

    def get(self) -> tuple[sqlite3.Connection, bool]:
        """The connection, and whether it was (re)opened just now."""
        path = self.layout.index_path
        try:
            ino: int | None = path.stat().st_ino
        except FileNotFoundError:
            ino = None
        if self._conn is not None and ino == self._ino:
            return self._conn, False
        self.close()
        self.layout.ensure()
        try:
            conn = connect(path)
        except MttuiError:
            raise
        except sqlite3.DatabaseError as exc:
            # The index is derived data: an unreadable one is discarded and rebuilt.
            warn(__name__, "discarding unreadable index (%s)", exc)
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            conn = connect(path)
        self._conn, self._ino = conn, path.stat().st_ino
        return conn, True

    def swap_in(self, built: Path) -> None:
        """Put the rebuilt index ``built`` in place (``swap``), this connection closed
        first: open, it would keep the build from being renamed in."""
        from .swap import swap_in

        self.close()
        swap_in(built, self.layout.index_path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
