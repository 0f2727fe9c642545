"""The time-travel records of a session log, read cheaply (timetravel.md).

Only ``file_checkpoint``, ``rewind*`` and ``tool_resolution`` lines are parsed;
every other line is skipped by its first bytes, so this costs one read of the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .reader import iter_lines, parse_line

if TYPE_CHECKING:
    from .record_types import Record

_KINDS = (b'"type":"file_checkpoint"', b'"type":"rewind', b'"type":"tool_resolution"')


@dataclass
class Checkpoint:
    """A ``file_checkpoint``: the snapshot taken before message ``seq``'s turn changed files.

    ``seq`` is placed by ``message_id`` when the transcript is known (a steer read later
    moves the messages after it); ``error`` is set (and ``ref`` empty) for a snapshot
    that failed: its turn's side effects are not covered by any snapshot.
    """

    seq: int
    run_id: str
    ref: str
    created_at: str
    files: int
    skipped: list[str]
    message_id: str = ""
    error: str | None = None

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "seq": self.seq, "run_id": self.run_id, "ref": self.ref or None,
            "created_at": self.created_at, "files": self.files, "skipped": self.skipped}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class RewindOp:
    """One rewind (or undo): its code part (``rewind_start``/``rewind_end``) and its
    conversation part (a ``rewind`` record), linked by ``op``."""

    op: str
    undo_of: str | None = None
    start: Record | None = None
    end: Record | None = None
    rewind: Record | None = None
    undone: bool = False

    @property
    def incomplete(self) -> bool:
        """Started and never ended, or a rewind of both whose files went back and whose
        conversation did not (a crash before its ``rewind`` record)."""
        if self.start is None:
            return False
        return self.end is None or bool(self.start.get("conversation")) and self.rewind is None


@dataclass
class Timeline:
    checkpoints: list[Checkpoint] = field(default_factory=list)
    ops: list[RewindOp] = field(default_factory=list)
    resolutions: dict[str, Record] = field(default_factory=dict)  # call_id -> last one

    def last_undoable(self) -> RewindOp | None:
        """The newest rewind that is not an undo and was not undone."""
        for op in reversed(self.ops):
            if op.undo_of is None and not op.undone:
                return op
        return None

    def op(self, op_id: str) -> RewindOp | None:
        return next((op for op in self.ops if op.op == op_id), None)

    def incomplete(self) -> RewindOp | None:
        """The newest code rewind, if a crash left it half-done (see ``RewindOp.incomplete``)."""
        for op in reversed(self.ops):
            if op.start is not None:
                return op if op.incomplete else None
        return None

    def abandoned_seqs(self) -> set[int]:
        """Message seqs of the rewound branches (out of the model's view)."""
        out: set[int] = set()
        stack: list[set[int]] = []
        for op in self.ops:
            rec = op.rewind
            if rec is None:
                continue
            span = set(range(int(rec.get("abandoned_from_seq") or 0),
                             int(rec.get("abandoned_to_seq") or 0) + 1))
            if op.undo_of is None:
                stack.append(set(out))
                out |= span
            elif stack:
                out = stack.pop() | span
        return out

    def checkpoint_for(self, seq: int) -> Checkpoint | None:
        """The snapshot to restore when rewinding to message ``seq``: the one taken before
        that turn's first side effect, else the first one after it (a failed one too:
        the caller refuses it, a later snapshot would keep that turn's effects)."""
        after = [c for c in self.checkpoints if c.seq >= seq]
        return min(after, key=lambda c: (c.seq, c.error is None)) if after else None

    def place(self, messages: Sequence[Mapping[str, object]]) -> Timeline:
        """Give each snapshot the seq its message has in ``messages`` (the folded
        transcript); snapshots of older logs keep their recorded ``before_seq``."""
        where = {m.get("id"): i + 1 for i, m in enumerate(messages)}
        for c in self.checkpoints:
            seq = where.get(c.message_id) if c.message_id else None
            if isinstance(seq, int):
                c.seq = seq
        return self


def read_timeline(path: Path, messages: Sequence[Mapping[str, object]] | None = None
                  ) -> Timeline:
    """The time-travel records of the log at ``path``; with the folded transcript's
    ``messages``, snapshots are numbered as ``history`` numbers their message."""
    t = Timeline()
    ops: dict[str, RewindOp] = {}
    for _, raw, complete in iter_lines(path):
        if not complete or not any(k in raw[:60] for k in _KINDS):
            continue
        rec = parse_line(raw)
        if rec is None:
            continue
        kind = rec.get("type")
        if kind == "file_checkpoint":
            error = rec.get("error")
            t.checkpoints.append(Checkpoint(
                int(rec.get("before_seq") or 0), str(rec.get("run_id") or ""),
                str(rec.get("ref") or ""), str(rec.get("timestamp") or ""),
                int(rec.get("files") or 0), list(rec.get("skipped") or []),
                str(rec.get("message_id") or ""),
                str(error) if error or not rec.get("ref") else None))
        elif kind == "tool_resolution":
            t.resolutions[str(rec.get("call_id") or "")] = rec
        elif kind in ("rewind", "rewind_start", "rewind_end"):
            key = str(rec.get("op") or f"seq-{rec.get('seq')}")
            op = ops.get(key)
            if op is None:
                op = ops[key] = RewindOp(key, undo_of=_str(rec.get("undoes")))
                t.ops.append(op)
                if op.undo_of and op.undo_of in ops:
                    ops[op.undo_of].undone = True
            if kind == "rewind":
                op.rewind = rec
            elif kind == "rewind_start":
                op.start = rec
            else:
                op.end = rec
    return t.place(messages) if messages is not None else t


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def fork_origin(path: Path) -> dict[str, object] | None:
    """``forked_from`` of a session's ``session_start`` (its first line), or ``None``."""
    from .reader import first_record

    try:
        start = first_record(path)
    except OSError:
        return None
    origin = (start or {}).get("forked_from")
    return dict(origin) if isinstance(origin, dict) else None


def mark_rewound(path: Path, messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """``history --json`` messages with ``"branch": "rewound"`` on those a rewind took
    out of the model's view (they stay readable and searchable)."""
    abandoned = read_timeline(path).abandoned_seqs() if path.is_file() else set()
    for m in messages:
        seq = m.get("seq")
        if isinstance(seq, int) and seq in abandoned:
            m["branch"] = "rewound"
    return messages
