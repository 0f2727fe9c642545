"""The tolerant reader of session logs: never fails on one bad line."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .plain import Plain, field
from .record_check import checked, is_integer, without_surrogates
from .records import KNOWN_TYPES

if TYPE_CHECKING:
    from .record_types import Record

_CHUNK = 1 << 20
MAX_PROBLEMS = 20


class ReadStats(Plain, frozen=False):
    """What a read saw besides the good records."""

    corrupt_lines: int = 0
    unknown_types: int = 0
    seq_gaps: int = 0
    last_seq: int = 0
    records: int = 0
    end_offset: int = 0
    torn_tail: bool = False
    corrupt_offsets: list[int] = field(default_factory=list)
    max_seq: int = 0  # the largest seq of a readable record
    bad_fields: int = 0  # readable records with fields of the wrong type left out
    line_no: int = 0  # lines seen (the number of the last one, when reading from the start)
    problems: list[str] = field(default_factory=list)  # "line N: what" (the first few)

    def note(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {self.line_no}: {text}")


def parse_line(raw: bytes) -> Record | None:
    """A record from one raw line, or ``None`` when the line is corrupt."""
    return parse_checked(raw)[0]


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_checked(raw: bytes) -> tuple[Record | None, list[str]]:
    """A record from one raw line (``None``: corrupt), and the fields left out of it.

    Never raises: nesting too deep for the parser makes the line corrupt, lone
    surrogates become U+FFFD, fields of the wrong type are left out (record_check).
    """
    try:
        rec = json.loads(raw.decode("utf-8"))
        if not isinstance(rec, dict):
            return None, []
        seq = rec.get("seq")
        if not isinstance(rec.get("type"), str) or not isinstance(seq, int):
            return None, []
        if not is_integer(seq) or seq < 1:
            return None, []
        if _SURROGATE_ESCAPE.search(raw) is not None:
            rec = without_surrogates(rec)
        rec, bad = checked(rec)
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return None, []
    return cast("Record", rec), bad


def iter_lines(path: Path, start: int = 0) -> Iterator[tuple[int, bytes, bool]]:
    """``(offset, line bytes without newline, complete)`` from ``start`` on.

    The last item may be incomplete (no newline yet: a torn tail or a write in flight).
    """
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        pieces: list[bytes] = []  # of a line longer than a chunk (joined once: linear)
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            pos = 0
            while True:
                nl = chunk.find(b"\n", pos)
                if nl < 0:
                    break
                line = chunk[pos:nl]
                if pieces:
                    line = b"".join([*pieces, line])
                    pieces = []
                yield offset, line, True
                offset += len(line) + 1
                pos = nl + 1
            if pos < len(chunk):
                pieces.append(chunk[pos:])
        if pieces:
            yield offset, b"".join(pieces), False


def reversed_lines(path: Path, chunk: int = 65536) -> Iterator[bytes]:
    """The file's lines from the last to the first (linear, however long a line is)."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        pieces: list[bytes] = []  # of the line being put together, right to left
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            parts = fh.read(end - start).split(b"\n")
            if len(parts) == 1:
                pieces.append(parts[0])
            else:
                yield b"".join([parts[-1], *reversed(pieces)])
                yield from reversed(parts[1:-1])
                pieces = [parts[0]]
            end = start
        if pieces:
            yield b"".join(reversed(pieces))


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
        st.line_no += 1
        if not raw.strip():
            continue
        rec, bad = parse_checked(raw) if complete else (None, [])
        if rec is None:
            st.corrupt_lines += 1
            st.corrupt_offsets.append(offset)
            st.note("torn (no end of line)" if not complete else "cannot be read")
            continue
        if bad:
            st.bad_fields += 1
            st.note(f"{rec['type']}: wrong type of {', '.join(bad)} (ignored)")
        if rec["type"] not in KNOWN_TYPES:
            st.unknown_types += 1
        if seq and rec["seq"] != seq + 1:
            st.seq_gaps += 1
        seq = rec["seq"]
        st.last_seq = seq
        st.max_seq = max(st.max_seq, seq)
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
    """The first readable record (normally ``session_start``): its line alone is read,
    unless it cannot be (then the file until a readable one)."""
    with open(path, "rb") as fh:
        line = fh.readline()
    if line.endswith(b"\n"):
        rec = parse_line(line[:-1]) if line.strip() else None
        if rec is not None:
            return rec
    for _, rec in read_records(path):
        return rec
    return None


SEQ_RUN = 16


def last_seq(path: Path) -> int:
    """The largest plausible ``seq`` of a readable record at the end of the file.

    Read backwards until a run of :data:`SEQ_RUN` records in unbroken order (or
    the start): a hostile last line with a lower ``seq`` does not make the writer
    reuse numbers, and the cost stays that of the last few lines. A record whose
    neighbour continues or precedes it by one is trusted (lines deleted by hand leave
    such runs); a lone one counts only if a writer could have given it its seq: one
    per line since the last trusted record (or since the start). So a ``1e18`` written
    at the end by hand is not continued from, like a corrupt line.
    """
    if os.path.getsize(path) == 0:
        return 0
    run = 0
    after: int | None = None  # the seq of the record after this one
    seen: list[tuple[int, int]] = []  # (lines from the end, seq), last line first
    lines = 0
    for raw in reversed_lines(path):
        lines += 1
        rec = parse_line(raw) if raw.strip() else None
        if rec is None:
            continue
        seq = int(rec["seq"])
        seen.append((lines, seq))
        run = run + 1 if after is not None and seq == after - 1 else 1
        after = seq
        if run >= SEQ_RUN:
            break
    seen.reverse()  # file order
    seqs = [seq for _, seq in seen]
    anchor = (lines + 1, 0)  # the start: line n from the start has a seq <= n
    best = 0
    for i, (at, seq) in enumerate(seen):
        trusted = (i > 0 and seqs[i - 1] == seq - 1) or (
            i + 1 < len(seen) and seqs[i + 1] == seq + 1)
        if trusted:
            anchor = (at, seq)
        elif seq > anchor[1] + anchor[0] - at:
            continue  # more seqs than lines since the last trusted record
        best = max(best, seq)
    return best
