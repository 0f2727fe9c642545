"""The append-only session event log writer (record contract v1)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .lock import SessionLock
from .paths import FILE_MODE
from .reader import last_seq
from .records import iso_timestamp
from .utf8 import valid_text


def dump_record(record: Mapping[str, object]) -> bytes:
    """One record as a single UTF-8 line (``ensure_ascii=False``, ``\\n``-terminated).

    Never fails on text UTF-8 cannot encode: a lone surrogate is written as U+FFFD.
    """
    return _dump(record)[0]


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps's, made once


def _dump(record: Mapping[str, object]) -> tuple[bytes, bool]:
    """The line of ``record`` and whether unencodable text had to be replaced in it."""
    line = _ENCODER.encode(record) + "\n"
    try:
        return line.encode("utf-8"), False
    except UnicodeEncodeError:  # JSON leaves surrogates as they are with ensure_ascii=False
        return valid_text(line).encode("utf-8"), True


class SessionLog:
    """Appends records to one session's JSONL file; the only writer of that file.

    Every :meth:`append` writes whole lines with one ``write()`` and returns only
    after ``flush`` + ``fsync``, so the caller may act on the event.
    """

    def __init__(self, path: Path, session_id: str, lock: SessionLock, next_seq: int) -> None:
        self.path = path
        self.session_id = session_id
        self._lock = lock
        self._seq = next_seq - 1
        self._torn = False
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)

    # -- opening -------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, session_id: str) -> SessionLog:
        """Create a new, empty log (exclusive create) and take its lock."""
        lock = SessionLock(path)
        lock.acquire()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            os.close(fd)
            return cls(path, session_id, lock, next_seq=1)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def open(cls, path: Path, session_id: str) -> SessionLog:
        """Open an existing log for appending; raises ``SessionLocked`` if held."""
        lock = SessionLock(path)
        lock.acquire()
        try:
            _terminate_torn_tail(path)
            return cls(path, session_id, lock, next_seq=last_seq(path) + 1)
        except BaseException:
            lock.release()
            raise

    # -- writing -------------------------------------------------------------
    @property
    def last_seq(self) -> int:
        return self._seq

    def append(self, type_: str, **fields: object) -> dict[str, object]:
        """Append one record and fsync it; returns the record as written."""
        return self.append_many([(type_, fields)])[0]

    def append_many(
        self, items: Iterable[tuple[str, dict[str, object]]]
    ) -> list[dict[str, object]]:
        """Append several records with a single fsync (nothing acts between them)."""
        if self._fd is None:
            raise ValueError("session log is closed")
        if self._torn:  # a failed write left part of a line: end it first
            _terminate_torn_tail(self.path)
            self._torn = False
        records: list[dict[str, object]] = []
        stamp = iso_timestamp()  # one fsync, one moment
        for type_, fields in items:
            self._seq += 1
            rec: dict[str, object] = {
                "type": type_,
                "seq": self._seq,
                "timestamp": stamp,
                "session_id": self.session_id,
            }
            rec.update({k: v for k, v in fields.items() if k not in rec})
            records.append(rec)
        done = self._seq - len(records)
        try:
            for i, rec in enumerate(records):  # one record per write() (storage.md)
                data, fixed = _dump(rec)
                if fixed:  # return the record as written (U+FFFD in place)
                    records[i] = json.loads(data)
                written = os.write(self._fd, data)
                if written != len(data):  # disk full, file size limit
                    raise OSError(f"short write to {self.path.name}")
                done += 1
        except BaseException:
            # Records not (wholly) written do not take a seq; a partial line is
            # ended before the next append, so that append is not glued to it.
            self._seq, self._torn = done, True
            raise
        os.fsync(self._fd)
        return records

    def append_lines(self, data: bytes, count: int) -> None:
        """Append ``count`` whole lines made by the caller (their ``seq`` values must run on
        from :attr:`last_seq`), with one fsync: copies of another log's records (fork)."""
        if self._fd is None:
            raise ValueError("session log is closed")
        if self._torn:
            _terminate_torn_tail(self.path)
            self._torn = False
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                if written <= 0:
                    raise OSError(f"short write to {self.path.name}")
                view = view[written:]
        except BaseException:
            self._torn = True
            raise
        os.fsync(self._fd)
        self._seq += count

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._lock.release()

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _terminate_torn_tail(path: Path) -> None:
    """End a torn last line (left by a crash) so the next record starts on its own line.

    The torn line stays in the file and is counted as corrupt by readers.
    """
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
