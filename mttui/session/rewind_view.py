"""How ``rewind`` records change the model's view of a folded transcript.

A rewind abandons the messages from ``to_seq`` on (by id, as they stood when it
was written) and puts back the compression state as of just before ``to_seq``;
its undo (``undo: true``) brings that view back and abandons what was said on
the rewound branch in between. The abandoned messages stay in the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from .record_types import Compression, Message, Record


@dataclass
class _Saved:
    abandoned: set[str]
    compression: Compression | None
    after_from: int
    length: int
    cleared_from: int


@dataclass
class RewindState:
    """What the fold keeps to apply rewinds: abandoned ids, the compressions seen
    (with the number of messages before each), and the rewinds that may be undone."""

    abandoned: set[str] = field(default_factory=set)
    compressions: list[tuple[int, Compression]] = field(default_factory=list)
    stack: list[_Saved] = field(default_factory=list)
    unresolved: bool = False  # a rewind to a message this fold does not hold
    count: int = 0
    # a ``rewind_start`` without its ``rewind_end`` — or, for a rewind of both, without
    # its ``rewind`` record (the files went back, the conversation did not)
    open_start: Record | None = None
    clears: list[int] = field(default_factory=list)  # positions of ``session_clear`` records
    cleared_from: int = 0  # the model sees nothing before this position (``/clear``)

    def started(self, rec: Record) -> None:
        self.open_start = rec

    def ended(self, rec: Record) -> None:
        start = self.open_start
        if start is not None and start.get("op") == rec.get("op"):
            if start.get("conversation"):
                # the files are back; the ``rewind`` record is still due
                self.open_start = cast("Record", {**start, "files_done": True})
            else:
                self.open_start = None

    def clear(self, position: int) -> None:
        """A ``session_clear`` at ``position``: the model starts from nothing there."""
        self.clears.append(position)
        self.cleared_from = position

    def apply(self, rec: Record, messages: list[Message], compression: Compression | None,
              after_from: int) -> tuple[Compression | None, int]:
        """Apply one ``rewind`` record; returns the compression state to use from now on."""
        self.count += 1
        if self.open_start is not None and self.open_start.get("op") == rec.get("op"):
            self.open_start = None
        if rec.get("undo"):
            if not self.stack:
                return compression, after_from
            saved = self.stack.pop()
            self.cleared_from = saved.cleared_from
            self.abandoned = set(saved.abandoned)
            self.abandoned.update(str(m.get("id")) for m in messages[saved.length:])
            return saved.compression, saved.after_from
        target = str(rec.get("to_message_id") or "")
        pos = next((i for i, m in enumerate(messages) if m.get("id") == target), None)
        if pos is None:
            self.unresolved = True
            return compression, after_from
        self.stack.append(_Saved(set(self.abandoned), compression, after_from, len(messages),
                                 self.cleared_from))
        self.abandoned.update(str(m.get("id")) for m in messages[pos:])
        # The view as it stood at ``pos``: after the clear then in force, and only the
        # compressions made after that clear.
        self.cleared_from = max((c for c in self.clears if c <= pos), default=0)
        then = [(n, c) for n, c in self.compressions if self.cleared_from <= n <= pos]
        if not then:
            return None, self.cleared_from
        return then[-1][1], then[-1][0]

    def visible(self, messages: list[Message]) -> list[Message]:
        if not self.abandoned:
            return messages
        return [m for m in messages if str(m.get("id")) not in self.abandoned]
