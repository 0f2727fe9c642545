"""Find compressions and resumes in a session log without parsing every line.

The history pages come from the index (messages only). Compression and resume
records are rare, so one byte scan of the log finds them and counts the
transcript messages before each (its position in the history). Records start
with ``{"type":"…"`` (the writer puts ``type`` first), so a line-start match is
exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

from .plain import Plain
from .reader import parse_line

if TYPE_CHECKING:
    from .record_types import Record

MarkerKind = Literal["compression", "resumed", "cleared", "rewind", "resolution", "denial"]

CHUNK = 1 << 20
MESSAGE = b'\n{"type":"transcript_message"'
# records that also carry a transcript message (pending.md): a steer, a taken queue item
ALSO_MESSAGES = (b'\n{"type":"pending_steer"', b'\n{"type":"pending_take"')
# record type -> marker kind (the index keeps them too: index/marker_rows.py)
RECORD_KINDS: dict[str, MarkerKind] = {
    "compression": "compression",
    "session_resumed": "resumed",
    "session_clear": "cleared",  # /clear: the divider in the history
    "rewind": "rewind",  # a conversation rewind or its undo (timetravel.md)
    # the tool ledger: a call settled by the user, a re-run denied at its approval
    "tool_resolution": "resolution",
    "approval_decision": "denial",
}
KINDS: dict[bytes, MarkerKind] = {
    b'\n{"type":"' + t.encode() + b'"': k for t, k in RECORD_KINDS.items()
}
LEDGER_KINDS = frozenset({"resolution", "denial"})  # not items: they label tool calls


class Marker(Plain, frozen=False):
    """A non-message event of the log, placed after message ``anchor`` (0 = before all)."""

    kind: MarkerKind
    anchor: int
    record_seq: int
    data: dict[str, object]


def scan_markers(path: Path) -> list[Marker]:
    """Compression and resume (with warnings) markers of a log, in file order (none if
    unreadable)."""
    try:
        with open(path, "rb") as fh:
            return _scan(fh)
    except OSError:
        return []


def _scan(fh: BinaryIO) -> list[Marker]:
    found: list[Marker] = []
    messages = 0
    carry = b"\n"
    while True:
        chunk = fh.read(CHUNK)
        buf = carry + chunk if chunk else carry + b"\n"
        cut = buf.rfind(b"\n")
        hits: list[tuple[int, MarkerKind]] = []
        for pattern, kind in KINDS.items():
            pos = buf.find(pattern, 0, cut)
            while pos != -1:
                hits.append((pos, kind))
                pos = buf.find(pattern, pos + 1, cut)
        start = 0
        for pos, kind in sorted(hits):
            messages += _count(buf, start, pos)
            start = pos
            end = buf.find(b"\n", pos + 1)
            marker = _parse(buf[pos + 1 : end], kind, messages)
            if marker is not None:
                found.append(marker)
        messages += _count(buf, start, cut)
        carry = buf[cut:]
        if not chunk:
            break
    return found


def _count(buf: bytes, start: int, end: int) -> int:
    return sum(buf.count(p, start, end) for p in (MESSAGE, *ALSO_MESSAGES))


def _parse(line: bytes, kind: MarkerKind, anchor: int) -> Marker | None:
    rec = parse_line(line.strip())  # type-checked, never raises (reader)
    return None if rec is None else marker_of(rec, anchor)


def marker_of(rec: Record, anchor: int) -> Marker | None:
    """The marker a record makes after ``anchor`` messages, if it makes one."""
    kind = RECORD_KINDS.get(rec["type"])
    if kind is None:
        return None
    if kind == "resumed" and not rec.get("warnings"):
        return None  # a clean resume is not worth an item in the history
    if kind == "denial" and "deny" not in (rec.get("decisions") or {}).values():
        return None  # only denials matter to the ledger
    return Marker(kind, anchor, rec["seq"], dict(rec))
