"""The conversation as records tell it: messages, the model's view, the journal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from .pending import QUEUED_STATES, Lane, message_of, read_ids
from .rewind_view import RewindState

if TYPE_CHECKING:
    from .record_types import ApprovalRequest, Compression, Message, Record, ToolDispatch

__all__ = ["QUEUED_STATES", "Transcript", "fold", "in_model_view"]


def in_model_view(message: Mapping[str, object]) -> bool:
    """Whether a transcript message is part of what the model sees.

    Error lines (a failed model call, an undelivered steer) and unread steers are
    display-only: they never reach the checkpoint.
    """
    return message.get("role") == "tool" or message.get("status") not in ("error", "pending")


@dataclass
class Transcript:
    """What a session's log says, folded into one pass over its records."""

    session_id: str | None = None
    thread_id: str | None = None
    thread_ids: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    last_compression: Compression | None = None
    # messages appended after the last compression record (by position in ``messages``)
    after_compression_from: int = 0
    compressions: int = 0
    open_requests: dict[str, ApprovalRequest] = field(default_factory=dict)
    decided: dict[str, dict[str, str]] = field(default_factory=dict)
    dispatched: dict[str, ToolDispatch] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    remembered_tools: set[str] = field(default_factory=set)
    has_start: bool = False
    requests_seen: set[str] = field(default_factory=set)
    dispatch_names: dict[str, str] = field(default_factory=dict)
    # pending inputs (pending.md), folded as the index projects them
    pending: Lane = field(default_factory=Lane)
    open_run: str | None = None  # run_id of a run_start without its run_end
    # rewinds (timetravel.md) and /clear: which messages the model still sees
    rewinds: RewindState = field(default_factory=RewindState)
    steer_ids: set[str] = field(default_factory=set)  # user messages that came as Steers

    def queued_ids(self) -> list[str]:
        """Queue items that still wait to run (held after a restart)."""
        return [i.id for i in self.pending.queue()]

    def model_view(self) -> tuple[str | None, list[Message]]:
        """``(summary, messages)`` the model sees: summary + kept + everything after."""
        if self.last_compression is None:
            return None, self.rewinds.visible(list(self.messages[self.rewinds.cleared_from :]))
        kept_ids = set(self.last_compression.get("kept_message_ids") or [])
        before = self.messages[: self.after_compression_from]
        kept = [m for m in before if m.get("id") in kept_ids]
        return self.last_compression.get("summary"), self.rewinds.visible(kept + self.messages[
            self.after_compression_from :
        ])

    def answered_call_ids(self) -> set[str]:
        return {m["tool_call_id"] for m in self.messages
                if m.get("role") == "tool" and m.get("tool_call_id")}

    def open_tool_calls(self) -> list[tuple[str, str]]:
        """``(call_id, tool_name)`` of assistant tool calls without a tool message."""
        answered = self.answered_call_ids()
        out = []
        for m in self.messages:
            for call in m.get("tool_calls") or []:
                cid = call.get("id")
                if cid and cid not in answered:
                    out.append((cid, call.get("name", "")))
        return out

    def interrupted_calls(self) -> list[str]:
        """Calls dispatched (may have run) without an outcome: never re-run."""
        return [cid for cid in self.dispatched if cid not in self.outcomes]


def fold(
    records: Iterable[Record], *, seed: list[Message] | None = None
) -> Transcript:
    """Fold records (in file order) into a :class:`Transcript`.

    ``seed``: messages known to precede ``records`` (a fold of a log's tail starts
    with the messages its first ``compression`` record kept).
    """
    t = Transcript()
    t.messages = [cast("Message", dict(m)) for m in seed or []]
    by_id: dict[str, Message] = {m.get("id", ""): m for m in t.messages}
    for rec in records:
        kind = rec.get("type")
        if kind == "session_start":
            t.has_start = True
            t.session_id = rec.get("session_id")
            if rec.get("thread_id"):
                t.thread_id = rec["thread_id"]
                t.thread_ids.append(rec["thread_id"])
        elif kind == "session_update" and rec.get("thread_id"):
            t.thread_id = rec["thread_id"]
            t.thread_ids.append(rec["thread_id"])
        elif (found := message_of(rec)) is not None:  # also a steer, a taken queue item
            msg = cast("Message", dict(found))
            msg.setdefault("created_at", rec.get("timestamp"))
            if msg.get("id") in by_id:  # a duplicate append: keep the first
                continue
            by_id[msg.get("id", "")] = msg
            t.messages.append(msg)
            if kind == "pending_steer" or found.get("steer") is True:  # a fork's copy
                t.steer_ids.add(msg.get("id", ""))
        elif kind == "message_update":
            target = by_id.get(rec.get("message_id", ""))
            if target is not None:
                for key in ("status", "content", "read_at", "error"):
                    if key in rec:
                        target[key] = rec[key]
            t.pending.apply(rec)
        elif kind == "compression":
            t.last_compression = cast("Compression", rec)
            t.after_compression_from = len(t.messages)
            t.compressions += 1
            t.rewinds.compressions.append((len(t.messages), t.last_compression))
        elif kind == "rewind":
            t.last_compression, t.after_compression_from = t.rewinds.apply(
                rec, t.messages, t.last_compression, t.after_compression_from)
        elif kind == "rewind_start":
            t.rewinds.started(rec)
        elif kind == "rewind_end":
            t.rewinds.ended(rec)
        elif kind == "session_clear":  # a new thread: the model starts from nothing
            t.last_compression = None
            t.after_compression_from = len(t.messages)
            t.rewinds.clear(len(t.messages))
        elif kind == "approval_request":
            t.open_requests[rec.get("request_id", "")] = cast("ApprovalRequest", rec)
            t.requests_seen.add(rec.get("request_id", ""))
        elif kind == "approval_decision":
            rid = rec.get("request_id", "")
            t.open_requests.pop(rid, None)
            t.decided[rid] = dict(rec.get("decisions") or {})
            t.remembered_tools.update(rec.get("remember") or [])
        elif kind == "grant_revoked":
            t.remembered_tools.difference_update(rec.get("tools") or [])
        elif kind == "tool_dispatch":
            t.dispatched[rec.get("call_id", "")] = cast("ToolDispatch", rec)
            t.dispatch_names[rec.get("call_id", "")] = str(rec.get("tool_name") or "")
        elif kind == "tool_outcome":
            t.outcomes[rec.get("call_id", "")] = rec.get("status", "")
        elif kind == "run_start":
            t.open_run = str(rec.get("run_id") or "")
        elif kind == "run_end":
            t.open_run = None
        if kind == "pending_read":
            _move_read(t, by_id, rec)
        if isinstance(kind, str) and kind.startswith("pending_"):
            t.pending.apply(rec)
    return t


def _move_read(t: Transcript, by_id: dict[str, Message], rec: Record) -> None:
    """Steers taken by a run: read, and placed where the run read them (after the
    assistant message they interrupted), as the index numbers them."""
    for mid in read_ids(rec):
        msg = by_id.get(mid)
        if msg is None:
            continue
        for pos in range(len(t.messages) - 1, -1, -1):
            if t.messages[pos] is msg:
                del t.messages[pos]
                if pos < t.after_compression_from:
                    t.after_compression_from -= 1
                break
        msg["status"] = "sent"
        if rec.get("read_at"):
            msg["read_at"] = rec["read_at"]
        t.messages.append(msg)

