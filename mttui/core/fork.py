"""Fork: a new session that starts with another one's conversation up to a point.

Usage (blocks on files: call from a worker)::

    result = fork(service, settings, "last", at=12, title=None)

The source is only read (no lock, nothing written to it). The fork's log starts
with ``session_start {forked_from}``, then copies of the source's messages up to
``seq`` (same ids) and the compression state as of then, on a thread seeded with
the model's view at ``seq``. A point inside a tool batch moves back to the last
complete point (``adjusted_from``: the seq asked for).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from mttui.session.errors import MttuiError
from mttui.session.fork_copy import Copied, CopyPlan, copy_lines, prepare
from mttui.session.index.fork_rows import index_fork
from mttui.session.models import SessionInfo
from mttui.session.pending import message_of, read_ids
from mttui.session.record_check import checked, is_integer
from mttui.session.records import iso_timestamp
from mttui.session.resume.facts import facts_for_path
from mttui.session.service import SessionService
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold

from .fork_guard import guarded

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.session.record_types import Message, Record


class ForkRefused(MttuiError):
    """A fork point that does not exist (exit 2); nothing was written."""


@dataclass
class ForkResult:
    session_id: str
    source_id: str
    seq: int
    adjusted_from: int | None
    messages: int
    title: str

    def as_json(self) -> dict[str, object]:
        return {"session_id": self.session_id,
                "forked_from": {"session_id": self.source_id, "seq": self.seq},
                "adjusted_from": self.adjusted_from, "messages": self.messages,
                "title": self.title}


def complete_point(messages: list[Message], seq: int) -> int:
    """``seq`` moved back (if needed) so that no tool batch is split: an assistant
    message with tool calls at or before it has all its results at or before it."""
    point = seq
    while point > 0:
        head = messages[:point]
        answered = {m.get("tool_call_id") for m in head if m.get("role") == "tool"}
        split = [i for i, m in enumerate(head)
                 if any(c.get("id") not in answered for c in m.get("tool_calls") or [])]
        if not split:
            return point
        point = split[0]  # just before the assistant message with the open calls
    return point


def fork(service: SessionService, settings: Settings, ref: str, *, at: int | None = None,
         title: str | None = None) -> ForkResult:
    """Fork session ``ref`` at message ``at`` (default: its last message)."""
    from mttui.graph.seed import seed_thread, sent_contents, view_messages

    info = service.resolve(ref)
    plan = prepare(service.layout, info, at)
    if plan is not None:
        done = _fork_copied(service, settings, info, plan, title)
        if done is not None:
            return done
    records, _ = service.records(info.id)
    whole = fold(records)
    total = len(whole.messages)
    asked = total if at is None else at
    if not 1 <= asked <= total:
        raise ForkRefused(f"session {info.id} has no message {asked} (it has {total})")
    if asked in read_timeline(info.path).abandoned_seqs():
        raise ForkRefused(f"message {asked} is on a rewound branch; undo that rewind first")
    seq = complete_point(whole.messages, asked)
    if seq == 0:
        raise ForkRefused(f"no complete point at or before message {asked}")
    # the first ``seq`` messages as ``history`` numbers them (queued inputs and steers
    # included, a steer where the run read it), and the state of the log as of then
    keep = {m.get("id") for m in whole.messages[:seq]}
    t = fold(records[:_records_through(records, keep)])
    summary, view = t.model_view()
    view = [m for m in view if m.get("id") in keep]
    shown = set(id(m) for m in t.rewinds.visible(list(t.messages)))
    copies = [m for m in t.messages if id(m) in shown and m.get("id") in keep]
    source_title = info.title or "untitled"
    new_title = title or f"{source_title} (fork)"
    writer = service.create_session(provider=settings.provider, model=settings.model,
                                    title=new_title,
                                    forked_from={"session_id": info.id, "seq": seq})
    with guarded(service, writer):
        db = service.layout.checkpoints_path(info.project_hash)
        sent = sent_contents(db, whole.thread_ids, view)  # @file blocks as the model had them
        seed_thread(writer, settings, project=Path(info.project), checkpoints_path=db,
                    messages=view_messages(summary, list(view), sent, whole.steer_ids),
                    thread_id=writer.thread_id)
        items: list[tuple[str, dict[str, object]]] = []
        before = {id(m) for m in t.messages[: t.after_compression_from]}
        cleared = {id(m) for m in t.messages[: t.rewinds.cleared_from]}
        for m in copies:
            if cleared and id(m) not in cleared and not _has(items, "session_clear"):
                # a /clear the copies span: the fork's model starts after it too
                items.append(("session_clear", {"thread_id": writer.thread_id}))
            if t.last_compression is not None and id(m) not in before and not _has(items):
                items.append(_compression(t.last_compression))
            message = {k: v for k, v in m.items() if k != "created_at"}
            if m.get("id") in whole.steer_ids:  # the copy keeps what it came as
                message["steer"] = True
            items.append(("transcript_message", {"message": message}))
        if t.last_compression is not None and not _has(items):
            items.append(_compression(t.last_compression))
        writer.append_many(items)
    adjusted = asked if seq != asked else None
    return ForkResult(writer.session_id, info.id, seq, adjusted, len(copies), new_title)


def _fork_copied(service: SessionService, settings: Settings, info: SessionInfo,
                 plan: CopyPlan, title: str | None) -> ForkResult | None:
    """The fast fork: the source's lines copied raw, its index rows copied, the thread
    seeded from the fork's last compression on (``None``: the lines were not as
    expected; nothing was written)."""
    from mttui.graph.seed import seed_thread, sent_contents, view_messages

    copied = copy_lines(plan.prefix, messages=plan.seq)
    if copied is None:
        return None
    new_title = title or f"{info.title or 'untitled'} (fork)"
    writer = service.create_session(provider=settings.provider, model=settings.model,
                                    title=new_title,
                                    forked_from={"session_id": info.id, "seq": plan.seq})
    with guarded(service, writer):
        stamp = iso_timestamp()
        data, messages, compressions = copied.render(
            session_id=writer.session_id, first_seq=writer.log.last_seq + 1, timestamp=stamp)
        base = writer.path.stat().st_size
        writer.append_lines(data, len(copied.kinds))
        indexed = plan.rows_ok and index_fork(
            service.layout, source_id=info.id, fork_id=writer.session_id,
            fork_path=writer.path, offsets=[base + o for o in messages],
            compressions=[base + o for o in compressions], timestamp=stamp,
            last_seq=writer.log.last_seq)
        if not indexed:
            service.get(writer.session_id)  # the index reads the fork's log instead
        with _no_collection():
            summary, view = _copied_view(copied, writer.path, writer.session_id,
                                         info.project_hash)
            db = service.layout.checkpoints_path(info.project_hash)
            # no rewind or /clear in this log: its current thread holds every prompt of
            # the view with the @file blocks the model was sent
            sent = sent_contents(db, [info.thread_id] if info.thread_id else [], view)
            steers = {str(m.get("id")) for m in view if m.get("steer") is True}
            seed_thread(writer, settings, project=Path(info.project), checkpoints_path=db,
                        messages=view_messages(summary, view, sent, steers),
                        thread_id=writer.thread_id)
    adjusted = plan.asked if plan.seq != plan.asked else None
    return ForkResult(writer.session_id, info.id, plan.seq, adjusted, plan.seq, new_title)


@contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused: building 100 000 messages (dicts, then
    LangChain objects) set it off again and again, a third of a large fork's time; none
    of them is garbage until the fork is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _copied_view(copied: Copied, path: Path, session_id: str,
                 project_hash: str) -> tuple[str | None, Sequence[Mapping[str, object]]]:
    """The model's view of a fork whose log holds ``copied`` (and no other message
    records). Without a compression it is every copied message: those lines are parsed
    in one go (the source's index vouched for them) rather than read back and checked
    one by one; with one, only the log's tail after it is read."""
    if b"compression" in copied.kinds:
        facts = facts_for_path(path, session_id, project_hash)
        return facts.summary, facts.view
    data = b"[" + b",".join(b'{"type":"%s",%s' % (kind, body.rstrip(b"\n"))
                            for kind, body in zip(copied.kinds, copied.bodies, strict=True))
    if _SURROGATE.search(data) is not None:  # the reader mends those: let it
        facts = facts_for_path(path, session_id, project_hash)
        return facts.summary, facts.view
    parsed: list[dict[str, object]] = json.loads(data + b"]")
    # as the reader has them: a field of the wrong type left out (record_check)
    records = [cast("Record", rec if _plain(rec) else checked(cast(dict, rec))[0])
               for rec in parsed]
    return fold(records).model_view()


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_TEXT_KEYS = frozenset({"id", "role", "content", "tool_call_id", "name", "status", "read_at",
                        "error", "created_at"})
_TOKENS = frozenset({"input_tokens", "output_tokens"})


def _plain(rec: Mapping[str, object]) -> bool:
    """A message record whose fields are all text, but for a usage of token counts
    (record_check leaves it as it is)."""
    msg = rec.get("message")
    if len(rec) != 2 or msg.__class__ is not dict:
        return False
    assert isinstance(msg, dict)
    for key, value in msg.items():
        if value.__class__ is str:
            if key not in _TEXT_KEYS:
                return False
        elif key != "usage" or not (value.__class__ is dict and value.keys() <= _TOKENS
                                    and all(is_integer(v) for v in value.values())):
            return False
    return True


def _has(items: list[tuple[str, dict[str, object]]], kind: str = "compression") -> bool:
    return any(k == kind for k, _ in items)


def _compression(rec: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    skip = ("type", "seq", "timestamp", "session_id")
    return ("compression", {k: v for k, v in rec.items() if k not in skip})


def _records_through(records: list[Record], ids: set[str | None]) -> int:
    """How many records it takes to place every message of ``ids``: the record that adds
    it, or for a steer the ``pending_read`` that moved it to where the run read it."""
    placed_at: dict[str | None, int] = {}
    for i, rec in enumerate(records):
        found = message_of(rec)
        if found is not None:
            placed_at.setdefault(found.get("id"), i)
        elif rec.get("type") == "pending_read":
            for mid in read_ids(rec):
                placed_at[mid] = i
    return max((placed_at[m] for m in ids if m in placed_at), default=len(records) - 1) + 1
