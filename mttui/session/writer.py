"""A session opened for writing: the log plus keeping the index in step."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .log import SessionLog
from .pending import Lane, read_lane
from .totals import LogTotals


class SessionWriter:
    """The one writer of a session. Appends are fsynced, then the index catches up.

    ``on_append`` (injected by the service) brings the index up to date with the
    file right after each fsync — same process, same order (storage.md). Appends
    are serialized: a run thread and the UI (a steer, a queue edit) may both write.
    """

    def __init__(
        self,
        log: SessionLog,
        *,
        thread_id: str | None,
        project: str,
        project_hash: str,
        on_append: Callable[[Path], None] | None = None,
    ) -> None:
        self.log = log
        self.thread_id = thread_id
        self.project = project
        self.project_hash = project_hash
        self._on_append = on_append
        self._lock = threading.RLock()
        # the log's totals from the index, when it has read the whole file (injected
        # by the service; ``None``: unknown, a reader must read the log itself)
        self.totals_source: Callable[[], LogTotals | None] = lambda: None
        self.lane_source: Callable[[], Lane | None] = lambda: None  # the pending lane
        self._deferring = 0  # inside index_deferred(): appends leave the index behind
        self._behind = False  # appended while deferring, the index not caught up yet

    @property
    def session_id(self) -> str:
        return self.log.session_id

    @property
    def path(self) -> Path:
        return self.log.path

    def append(self, type_: str, **fields: object) -> dict[str, object]:
        """Append one record (fsynced) and update the index; returns the record."""
        return self.append_many([(type_, fields)])[0]

    def append_many(
        self, items: Iterable[tuple[str, dict[str, object]]]
    ) -> list[dict[str, object]]:
        with self._lock:
            records = self.log.append_many(items)
            for rec in records:
                thread_id = rec.get("thread_id")
                if rec["type"] == "session_update" and thread_id and isinstance(thread_id, str):
                    self.thread_id = thread_id
            if self._on_append is not None:
                if self._deferring:
                    self._behind = True
                else:
                    self._on_append(self.log.path)
            return records

    def append_lines(self, data: bytes, count: int) -> None:
        """Append whole lines made by the caller (see ``SessionLog.append_lines``). The
        index is NOT updated here: the caller brings it up to date (a fork copies rows)."""
        with self._lock:
            self.log.append_lines(data, count)

    @contextmanager
    def index_deferred(self) -> Iterator[None]:
        """Appends inside leave the index behind; it catches up once at the end (one
        read of the new bytes), so a run's tool steps do not wait for it. The log is
        fsynced as always; a reader that needs this session's index (``totals``,
        ``lane``, any query) catches up from the file first, and so does the next
        process after a crash before the end."""
        with self._lock:
            self._deferring += 1
        try:
            yield
        finally:
            with self._lock:
                self._deferring -= 1
                if not self._deferring and self._behind:
                    self._behind = False
                    if self._on_append is not None:
                        self._on_append(self.log.path)

    def totals(self) -> LogTotals | None:
        """What a runner needs of the whole log, from the index (``None``: read the log)."""
        with self._lock:  # not between an append and its index update
            return self.totals_source()

    def lane(self) -> Lane:
        """The session's pending lane: from the index when it has the whole file, else
        folded from the log."""
        with self._lock:
            found = self.lane_source()
        return found if found is not None else read_lane(self.log.path)

    def close(self) -> None:
        self.log.close()

    @property
    def closed(self) -> bool:
        return self.log.closed

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
