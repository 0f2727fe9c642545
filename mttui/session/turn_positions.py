"""Message seqs as :func:`~mttui.session.transcript.fold` numbers them, followed line by line.

A file snapshot names the user message whose turn it precedes (timetravel.md). Its
seq must be the one ``history`` shows whatever came before: queued inputs (their
message is in a ``pending_take``), steers (``pending_steer``, moved to where the run
read them by ``pending_read``), duplicate appends (the first one counts). Only the
lines that can change a position are parsed; the others are counted by their head.
"""

from __future__ import annotations

from pathlib import Path

from .pending import read_ids
from .reader import iter_lines, parse_line

_MESSAGE_HEADS = (b'"type":"transcript_message"', b'"type":"pending_steer"',
                  b'"type":"pending_take"')
_PARSED = (b'"role":"user"', b'"type":"pending_steer"', b'"type":"pending_take"')


class TurnPositions:
    """Follows one log: the seq of every user message and steer, the count of the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._order: list[str | None] = []  # message ids in fold's order (None: not parsed)
        self._known: set[str] = set()
        self.records: list[dict[str, object]] = []  # lines of the kinds asked for, since last

    def follow(self, also: tuple[bytes, ...] = ()) -> None:
        """Read the log's new complete lines; lines whose head holds one of ``also`` are
        parsed and kept in :attr:`records` for the caller."""
        self.records = []
        for offset, raw, complete in iter_lines(self.path, self.offset):
            if not complete:
                break
            self.offset = offset + len(raw) + 1
            head = raw[:80]
            if any(k in head for k in _MESSAGE_HEADS):
                self._message(raw)
            elif b'"type":"pending_read"' in head:
                rec = parse_line(raw)
                if rec is not None:
                    self._move(read_ids(rec))
            if also and any(k in head for k in also):
                rec = parse_line(raw)
                if rec is not None:
                    self.records.append(dict(rec))

    def seq_of(self, message_id: str) -> int | None:
        """The 1-based seq of ``message_id`` (a user message or a steer), or ``None``."""
        if message_id not in self._known:
            return None
        return self._order.index(message_id) + 1

    @property
    def count(self) -> int:
        return len(self._order)

    def _message(self, raw: bytes) -> None:
        if not any(k in raw for k in _PARSED):
            self._order.append(None)  # an assistant or tool message: its position only
            return
        rec = parse_line(raw)
        message = rec.get("message") if rec is not None else None
        if not isinstance(message, dict):
            return  # torn or poisoned: fold skips it too
        mid = message.get("id")
        if not isinstance(mid, str) or message.get("role") != "user":
            self._order.append(None)
            return
        if mid in self._known:
            return  # a duplicate append: the first one keeps its place
        self._known.add(mid)
        self._order.append(mid)

    def _move(self, ids: list[str]) -> None:
        for mid in ids:  # read steers go to the end, as fold places them
            if mid in self._known:
                self._order.remove(mid)
                self._order.append(mid)
