"""Copying the start of a session log into a fork, line by line, without decoding it.

A fork's log holds copies of the source's ``transcript_message``, ``message_update``
and ``compression`` records up to the fork point (timetravel.md): same message ids,
same content. Only what names the record in its new file changes: ``seq``,
``timestamp`` and ``session_id``, which every record written by ``SessionLog``
has first, in that order. So a copy is the source's raw line with a new prefix;
decoding and re-encoding 100 000 messages is what made forks slow.

:func:`prepare` says whether the fast copy applies; when it does not (rewinds,
``/clear``, pending inputs, corrupt lines, an index behind the file), the caller
folds the log instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import BinaryIO

from .index.ingest import session_row
from .index.schema import open_index
from .models import SessionInfo
from .paths import Layout

COPIED = (b"transcript_message", b"message_update", b"compression")
_LINE = re.compile(  # after the newline ending the line before (a literal prefix: fast)
    rb'\n\{"type":"(transcript_message|message_update|compression)","seq":\d+,'
    rb'"timestamp":"[^"\\]*","session_id":"[^"\\]*",'
)
# Records that change which messages there are, their order or the model's view in
# ways a plain copy would not carry over: such a source takes the folding path.
_BLOCKERS = (b'"type":"pending_', b'"type":"rewind"', b'"type":"session_clear"')
_UPDATE = b'"type":"message_update"'


@dataclass
class CopyPlan:
    """A fork point the fast copy can serve."""

    source_sess: int
    total: int  # messages in the source
    asked: int
    seq: int  # the complete point at or before ``asked``
    prefix: bytes  # the source's bytes up to the end of message ``seq``'s line
    # the index rows of the source can be copied as they are (no ``message_update``
    # anywhere in the source: its rows are then exactly what the copied lines say)
    rows_ok: bool


@dataclass
class Copied:
    """The records to copy, each as its type and the rest of its line after the fields
    that name it (``seq``, ``timestamp``, ``session_id``)."""

    kinds: list[bytes] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def render(self, *, session_id: str, first_seq: int,
               timestamp: str) -> tuple[bytes, list[int], list[int]]:
        """The lines for the fork's log from ``first_seq`` on, and the offsets (in those
        bytes) of its messages and of its compressions."""
        sid, ts = json.dumps(session_id).encode(), json.dumps(timestamp).encode()
        out: list[bytes] = []
        msg_at: list[int] = []
        comp_at: list[int] = []
        pos = 0
        for seq, (kind, body) in enumerate(zip(self.kinds, self.bodies, strict=True), first_seq):
            head = b'{"type":"%s","seq":%d,"timestamp":%s,"session_id":%s,' % (kind, seq, ts, sid)
            if kind == b"transcript_message":
                msg_at.append(pos)
            elif kind == b"compression":
                comp_at.append(pos)
            out.append(head)
            out.append(body)
            pos += len(head) + len(body)
        return b"".join(out), msg_at, comp_at


def prepare(layout: Layout, info: SessionInfo, at: int | None) -> CopyPlan | None:
    """The plan of a fast fork of ``info`` at message ``at`` (``None``: the last), or
    ``None`` when only folding the log can do it (including every refusal)."""
    from .index.fork_rows import complete_from_index

    conn = open_index(layout)
    if conn is None:
        return None
    try:
        row = session_row(conn, info.id)
        try:
            size = info.path.stat().st_size
        except OSError:
            return None
        if (row is None or row["deleting"] or row["byte_offset"] != size
                or row["file_size"] != size or row["corrupt_lines"] or row["torn_tail"]):
            return None
        total = row["message_count"]
        asked = total if at is None else at
        if not 1 <= asked <= total:
            return None
        seq = complete_from_index(conn, row["sess"], asked)
        found = conn.execute("SELECT byte_offset FROM messages WHERE sess = ? AND msg_seq = ?",
                             (row["sess"], seq)).fetchone()
    finally:
        conn.close()
    if seq == 0 or found is None:
        return None
    with open(info.path, "rb") as fh:
        prefix = fh.read(int(found[0]))
        line = fh.readline()
        if not line.startswith(b'{"type":"transcript_message"') or not line.endswith(b"\n"):
            return None
        prefix += line
        if any(b in prefix for b in _BLOCKERS):
            return None
        # one read of the rest: a rewind or /clear later in the log may take copied
        # messages out of the view; an update changes what their index rows say
        later = _found_in(fh, (_UPDATE, *_BLOCKERS[1:]))
        if later - {_UPDATE}:
            return None
        rows_ok = _UPDATE not in prefix and not later
    return CopyPlan(row["sess"], total, asked, seq, prefix, rows_ok)


def _found_in(fh: BinaryIO, needles: tuple[bytes, ...], chunk: int = 1 << 20) -> set[bytes]:
    """Which of ``needles`` occur in the rest of ``fh`` (read a chunk at a time)."""
    found: set[bytes] = set()
    keep = max(len(n) for n in needles)
    tail = b""
    while block := fh.read(chunk):
        window = tail + block
        found.update(n for n in needles if n in window)
        if len(found) == len(needles):
            break
        tail = block[-keep:]
    return found


def copy_lines(prefix: bytes, *, messages: int) -> Copied | None:
    """The records of ``prefix`` a fork copies; ``None`` if one of them is not written as
    ``SessionLog`` writes it, or the count of messages is not ``messages``."""
    found = Copied()
    text = b"\n" + prefix
    for m in _LINE.finditer(text):
        end = text.index(b"\n", m.end()) + 1
        found.kinds.append(m.group(1))
        found.bodies.append(text[m.end():end])
    # every line of a copied type must have matched (a line written some other way
    # would have been left out silently)
    if sum(text.count(b'\n{"type":"' + k + b'"') for k in COPIED) != len(found.kinds):
        return None
    if found.kinds.count(b"transcript_message") != messages:
        return None
    return found
