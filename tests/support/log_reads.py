"""Which bytes of one file a piece of code reads: ``builtins.open`` wrapped, every read of
that file noted as ``(offset, length)``."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class _Noted:
    """A file object of the watched file whose reads are noted."""

    def __init__(self, fh: Any, reads: list[tuple[int, int]]) -> None:
        self._fh = fh
        self._reads = reads

    def _note(self, at: int, data: bytes) -> bytes:
        if data:
            self._reads.append((at, len(data)))
        return data

    def read(self, n: int = -1) -> bytes:
        at = self._fh.tell()
        return self._note(at, self._fh.read(n))

    def readline(self, n: int = -1) -> bytes:
        at = self._fh.tell()
        return self._note(at, self._fh.readline(n))

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def readinto(self, buf: Any) -> int:
        raise AssertionError("readinto is not watched")

    def __enter__(self) -> _Noted:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


@contextlib.contextmanager
def reads_of(path: Path) -> Iterator[list[tuple[int, int]]]:
    """``(offset, length)`` of every read of ``path`` made through ``open`` inside."""
    real = builtins.open
    target = path.resolve()
    reads: list[tuple[int, int]] = []

    def watched(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = real(file, mode, *args, **kwargs)
        if isinstance(file, str | Path) and "r" in mode and Path(file).resolve() == target:
            return _Noted(fh, reads)
        return fh

    builtins.open = watched  # type: ignore[assignment]
    try:
        yield reads
    finally:
        builtins.open = real


def bytes_in(reads: list[tuple[int, int]], start: int, end: int) -> int:
    """How many of the bytes read lie in ``[start, end)``."""
    return sum(max(0, min(at + n, end) - max(at, start)) for at, n in reads)
