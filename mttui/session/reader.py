"""The tolerant reader of session logs: never fails on one bad line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from .record_types import Record
from .records import KNOWN_TYPES

_CHUNK = 1 << 20


@dataclass
class ReadStats:
    """What a read saw besides the good records."""

    corrupt_lines: int = 0
    unknown_types: int = 0
    seq_gaps: int = 0
    last_seq: int = 0
    records: int = 0
    end_offset: int = 0
    torn_tail: bool = False
    corrupt_offsets: list[int] = field(default_factory=list)


def parse_line(raw: bytes) -> Record | None:
    """A record from one raw line, or ``None`` when the line is corrupt."""
    try:
        rec = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(rec, dict):
        return None
    if not isinstance(rec.get("type"), str) or not isinstance(rec.get("seq"), int):
        return None
    return cast(Record, rec)  # the contract's shape; fields are checked where they are used


def iter_lines(path: Path, start: int = 0) -> Iterator[tuple[int, bytes, bool]]:
    """``(offset, line bytes without newline, complete)`` from ``start`` on.

    The last item may be incomplete (no newline yet: a torn tail or a write in flight).
    """
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        rest = b""
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            buf = rest + chunk
            pos = 0
            while True:
                nl = buf.find(b"\n", pos)
                if nl < 0:
                    break
                yield offset, buf[pos:nl], True
                offset += nl + 1 - pos
                pos = nl + 1
            rest = buf[pos:]
        if rest:
            yield offset, rest, False


def reversed_lines(path: Path, chunk: int = 65536) -> Iterator[bytes]:
    """The file's lines from the last to the first."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            buf = fh.read(end - start) + rest
            lines = buf.split(b"\n")
            rest = lines[0] if start > 0 else b""
            yield from reversed(lines if start == 0 else lines[1:])
            end = start


def read_records(
    path: Path,
    start: int = 0,
    *,
    prev_seq: int = 0,
    tail_is_final: bool = True,
    stats: ReadStats | None = None,
) -> Iterator[tuple[int, Record]]:
    """Yield ``(byte offset, record)`` for every readable record from ``start``.

    Corrupt lines (garbage, invalid UTF-8, missing ``type``/``seq``) are counted
    in ``stats`` and skipped. An unterminated last line is counted as corrupt when
    ``tail_is_final``; otherwise (a live writer may still be writing it) it is left
    unread and ``stats.end_offset`` stops before it.
    """
    st = stats if stats is not None else ReadStats()
    st.end_offset = start
    seq = prev_seq or st.last_seq
    for offset, raw, complete in iter_lines(path, start):
        if not complete:
            if not tail_is_final:
                break
            st.torn_tail = True
        st.end_offset = offset + len(raw) + (1 if complete else 0)
        if not raw.strip():
            continue
        rec = parse_line(raw) if complete else None
        if rec is None:
            st.corrupt_lines += 1
            st.corrupt_offsets.append(offset)
            continue
        if rec["type"] not in KNOWN_TYPES:
            st.unknown_types += 1
        if seq and rec["seq"] != seq + 1:
            st.seq_gaps += 1
        seq = rec["seq"]
        st.last_seq = seq
        st.records += 1
        yield offset, rec


def read_all(path: Path) -> tuple[list[Record], ReadStats]:
    """Every readable record of a log, with the read's statistics."""
    stats = ReadStats()
    records = [rec for _, rec in read_records(path, stats=stats)]
    return records, stats


def read_record_at(path: Path, offset: int) -> Record | None:
    """The record whose line starts at ``offset`` (for paging by stored offsets)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        line = fh.readline()
    return parse_line(line.rstrip(b"\n")) if line.endswith(b"\n") else None


def first_record(path: Path) -> Record | None:
    """The first readable record (normally ``session_start``)."""
    for _, rec in read_records(path):
        return rec
    return None


def last_seq(path: Path) -> int:
    """The highest ``seq`` in the file, reading backwards from the end."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    with open(path, "rb") as fh:
        end = size
        tail = b""
        while end > 0:
            start = max(0, end - 65536)
            fh.seek(start)
            tail = fh.read(end - start) + tail
            lines = tail.split(b"\n")
            # lines[0] may be partial unless we reached the start of the file
            candidates = lines if start == 0 else lines[1:]
            for raw in reversed(candidates):
                rec = parse_line(raw) if raw.strip() else None
                if rec is not None:
                    return int(rec["seq"])
            tail = lines[0] if start > 0 else b""
            end = start
    return 0
