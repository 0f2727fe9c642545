"""What a run writes to the session log, and what the runner reads back from it.

Every method appends (fsynced) first and reports the event after, so a
``ToolDispatched`` event is only ever seen once its ``tool_dispatch`` record is
on disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mttui.session.reader import iter_lines, parse_line
from mttui.session.totals import LogTotals
from mttui.session.writer import SessionWriter

from .events import Compressed, Emit, MessageAdded, ToolDispatched, ToolFinished, UsageUpdated
from .messages import arguments_sha256
from .tools import risk_of


class Journal:
    """Appends the records of a run to the session log and emits the matching events."""

    def __init__(self, writer: SessionWriter) -> None:
        self.writer = writer
        self.stats = SessionStats()
        self.open_dispatches: set[str] = set()  # dispatched in this process, no outcome yet
        # called before each tool_dispatch is written (file checkpoints, timetravel.md)
        # (emit, run_id, tool_name, the turn's user message id)
        self.before_dispatch: Callable[[Emit, str, str, str], None] | None = None
        # held from a side-effecting call's snapshot to its outcome (no rewind meanwhile)
        self.activity: Callable[[], AbstractContextManager[None]] | None = None

    def tool_activity(self, tool_name: str) -> AbstractContextManager[None]:
        """Around a call's dispatch and run: another session's code rewind is refused
        while a tool that is not low risk may change the project."""
        if self.activity is None or risk_of(tool_name) == "low":
            return nullcontext()
        return self.activity()

    def message(self, emit: Emit, record: dict[str, Any], *, estimated: bool = False) -> None:
        self.writer.append("transcript_message", message=record)
        emit(MessageAdded(record))
        usage = record.get("usage")
        if record.get("role") == "assistant" and usage:
            self.stats.input_tokens += int(usage.get("input_tokens") or 0)
            self.stats.output_tokens += int(usage.get("output_tokens") or 0)
            emit(UsageUpdated(usage["input_tokens"], usage["output_tokens"], estimated))

    def compression(self, emit: Emit, record: dict[str, Any], event: Compressed) -> None:
        """``compression`` — appended only once the summary exists."""
        self.writer.append("compression", **record)
        emit(event)

    def dispatch(self, emit: Emit, run_id: str, call: dict[str, Any], turn: str = "",
                 mcp: tuple[str, str] | None = None) -> None:
        """Fsync ``tool_dispatch``; only then is the caller allowed to start the tool.
        ``turn``: the id of the user message whose turn this call belongs to; ``mcp``: the
        server and real tool name of an MCP call (``mcp_server`` and ``mcp_tool`` in the
        record: ``tool_name`` may be an alias)."""
        if self.before_dispatch is not None:
            self.before_dispatch(emit, run_id, call["tool_name"], turn)
        extra = {"mcp_server": mcp[0], "mcp_tool": mcp[1]} if mcp else {}
        self.writer.append(
            "tool_dispatch",
            run_id=run_id,
            call_id=call["call_id"],
            tool_name=call["tool_name"],
            arguments_sha256=arguments_sha256(call["arguments"]),
            **extra,
        )
        self.stats.tool_calls += 1
        self.open_dispatches.add(call["call_id"])
        emit(ToolDispatched(call["call_id"], call["tool_name"], call["arguments"]))

    def outcome(
        self, emit: Emit, run_id: str, call: dict[str, Any], status: str, record: dict[str, Any]
    ) -> None:
        """``tool_outcome`` and the tool's transcript message, in one fsync."""
        self.writer.append_many(
            [
                ("tool_outcome", {"run_id": run_id, "call_id": call["call_id"], "status": status}),
                ("transcript_message", {"message": record}),
            ]
        )
        self.open_dispatches.discard(call["call_id"])
        emit(ToolFinished(call["call_id"], call["tool_name"], status, record["content"]))
        emit(MessageAdded(record))


@dataclass
class SessionStats:
    """The ``session_end`` stats: totals of the whole session, not of one process."""

    turns: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def as_json(self) -> dict[str, int]:
        return {
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass
class LogFacts:
    """What the runner needs from an existing log, read in one pass."""

    stats: SessionStats = field(default_factory=SessionStats)
    remembered: set[str] = field(default_factory=set)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # request_id -> record

    @classmethod
    def from_totals(cls, totals: LogTotals) -> LogFacts:
        """The same facts as the index keeps them (requests by id only)."""
        stats = SessionStats(totals.turns, totals.tool_calls, totals.input_tokens,
                             totals.output_tokens)
        return cls(stats, set(totals.grants), {r: {"request_id": r} for r in totals.requests})


_USAGE = re.compile(rb'"role":"assistant".*"usage":\{"input_tokens":(\d+),"output_tokens":(\d+)')


def scan_log(path: Path) -> LogFacts:
    """Stats, remembered tools (granted, not revoked) and approval requests of a log.

    Cheap on long logs: only the few record types that matter are JSON-parsed;
    token usage is picked out of assistant lines with a regex (the writer's
    compact, ordered JSON makes that exact).
    """
    facts = LogFacts()
    if not path.exists():
        return facts
    for _, raw, complete in iter_lines(path):
        if not complete:
            continue
        head = raw[:120]
        if b'"type":"transcript_message"' in head:
            m = _USAGE.search(raw)
            if m:
                facts.stats.input_tokens += int(m.group(1))
                facts.stats.output_tokens += int(m.group(2))
        elif b'"type":"tool_dispatch"' in head:
            facts.stats.tool_calls += 1
        elif b'"type":"run_start"' in head:
            rec = parse_line(raw)
            if rec and not rec.get("continues"):
                facts.stats.turns += 1
        elif b'"type":"approval_request"' in head:
            rec = parse_line(raw)
            if rec and rec.get("request_id"):
                facts.requests[rec["request_id"]] = dict(rec)
        elif b'"type":"approval_decision"' in head:
            rec = parse_line(raw)
            if rec:
                facts.remembered.update(str(t) for t in rec.get("remember") or [])
        elif b'"type":"grant_revoked"' in head:
            rec = parse_line(raw)
            if rec:
                facts.remembered.difference_update(str(t) for t in rec.get("tools") or [])
    return facts
