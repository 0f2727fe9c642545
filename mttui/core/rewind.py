"""Rewind (conversation / code / both, dry run, undo): one use case for the TUI and the CLI.

Usage (blocks on files and git: call from a worker)::

    result = rewind(service, settings, "last", 5, conversation=True, code=True)
    result = undo_rewind(service, settings, "last")
    # with a session this process holds open (the TUI): pass its writer
    result = rewind_open(handle.writer, service, settings, 5)

Everything is append-only (timetravel.md): ``rewind_start`` (fsynced) before any
file is touched and ``rewind_end`` after; a ``rewind`` record plus
``session_update {thread_id}`` for the conversation, whose new thread is seeded
with the model's view as of just before the chosen message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mttui.session.errors import MttuiError
from mttui.session.models import SessionInfo
from mttui.session.records import new_id
from mttui.session.service import SessionService
from mttui.session.snapshots import ShadowRepo, ToolsRunning, git_available, own_outputs
from mttui.session.timeline import Checkpoint, RewindOp, Timeline, fork_origin, read_timeline
from mttui.session.transcript import Transcript, fold
from mttui.session.writer import SessionWriter

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.session.record_types import Message, Record

    from .handle import SessionHandle


class RewindRefused(MttuiError):
    """A rewind that cannot be done; nothing was changed. ``usage``: exit 2, else 1."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass
class RewindResult:
    session_id: str
    to_seq: int | None
    conversation: bool
    code: bool
    dry_run: bool
    files_restored: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)
    undo_ref: str | None = None
    prompt: str = ""
    thread_id: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"session_id": self.session_id, "to_seq": self.to_seq,
                "conversation": self.conversation, "code": self.code,
                "dry_run": self.dry_run, "files_restored": self.files_restored,
                "files_deleted": self.files_deleted, "undo_ref": self.undo_ref,
                "prompt": self.prompt}


@dataclass
class _Session:
    info: SessionInfo
    transcript: Transcript
    timeline: Timeline
    repo: ShadowRepo
    checkpoints_path: Path
    # a fork's copied messages: the source's first snapshot at or after each (its own
    # timeline went on after the copy; which snapshot came first is a matter of time)
    source_first: dict[str, Checkpoint] = field(default_factory=dict)


def _load(service: SessionService, info: SessionInfo) -> _Session:
    records, _ = service.records(info.id)
    transcript = fold(records)
    s = _Session(info, transcript, read_timeline(info.path, transcript.messages),
                 ShadowRepo(service.layout.home, Path(info.project)),
                 service.layout.checkpoints_path(info.project_hash))
    origin = fork_origin(info.path)
    if origin:
        s.source_first = _source_snapshots(service, str(origin.get("session_id") or ""),
                                           transcript)
    return s


def _source_snapshots(service: SessionService, source: str,
                      transcript: Transcript) -> dict[str, Checkpoint]:
    """For each message a fork copied (same id in its source), the source's snapshot
    that a code rewind to it would restore there, if any."""
    try:
        info = service.get(source)
        records, _ = service.records(source)
    except MttuiError:
        return {}
    theirs = fold(records).messages
    timeline = read_timeline(info.path, theirs)
    where = {str(m.get("id")): i + 1 for i, m in enumerate(theirs)}
    out: dict[str, Checkpoint] = {}
    for m in transcript.messages:
        seq = where.get(str(m.get("id")))
        cp = timeline.checkpoint_for(seq) if seq is not None else None
        if cp is not None:
            out[str(m.get("id"))] = cp
    return out


def _check_target(s: _Session, to_seq: int) -> None:
    messages = s.transcript.messages
    if not 1 <= to_seq <= len(messages) or messages[to_seq - 1].get("role") != "user":
        raise RewindRefused(f"message {to_seq} is not a user message of session "
                            f"{s.info.id} (see `mttui history {s.info.id}`)", usage=True)
    if to_seq in s.timeline.abandoned_seqs():
        raise RewindRefused(f"message {to_seq} is on a rewound branch; `mttui rewind "
                            f"{s.info.id} --undo` brings that branch back", usage=True)


def _snapshot_ref(s: _Session, to_seq: int) -> str:
    hint = "a conversation-only rewind is still possible (--conversation)"
    if not git_available():
        raise RewindRefused(f"file checkpoints are off (no `git` executable); {hint}")
    cp = s.timeline.checkpoint_for(to_seq)
    # a message a fork copied: the source's own later snapshot, if it came first in time
    theirs = s.source_first.get(str(s.transcript.messages[to_seq - 1].get("id")))
    if theirs is not None and (cp is None or theirs.created_at < cp.created_at):
        cp = theirs
    if cp is not None and cp.error is not None:
        raise RewindRefused(f"the file snapshot before message {cp.seq}'s turn failed "
                            f"({cp.error}), so what that turn changed cannot be undone; {hint}")
    if cp is None or not s.repo.has(cp.ref):
        raise RewindRefused(f"no file snapshot exists for message {to_seq}'s turn or after "
                            f"it; {hint}")
    return cp.ref


def plan_rewind(service: SessionService, ref: str, to_seq: int, *, conversation: bool = True,
                code: bool = True) -> RewindResult:
    """What the rewind would do (``dry_run``): nothing is written, no lock is taken."""
    info = service.resolve(ref)
    s = _load(service, info)
    _check_target(s, to_seq)
    result = RewindResult(info.id, to_seq, conversation, code, True,
                          prompt=str(s.transcript.messages[to_seq - 1].get("content") or ""))
    if code:
        changes = s.repo.changes(_snapshot_ref(s, to_seq))
        result.files_restored, result.files_deleted = changes.restored, changes.deleted
    return result


def rewind(service: SessionService, settings: Settings, ref: str, to_seq: int, *,
           conversation: bool = True, code: bool = True) -> RewindResult:
    """Rewind session ``ref`` to just before message ``to_seq`` (takes its lock:
    ``SessionLocked`` when another process holds it)."""
    info = service.resolve(ref)
    writer = service.open_session(info.path)
    try:
        return rewind_open(writer, service, settings, to_seq, conversation=conversation,
                           code=code, info=info)
    finally:
        writer.close()


def rewind_open(writer: SessionWriter, service: SessionService, settings: Settings,
                to_seq: int, *, conversation: bool = True, code: bool = True,
                info: SessionInfo | None = None) -> RewindResult:
    """The rewind on a session this process holds open (``writer``); the caller makes
    sure no run is active."""
    info = info or service.get(writer.session_id)
    s = _load(service, info)
    _check_target(s, to_seq)
    target = s.transcript.messages[to_seq - 1]
    result = RewindResult(info.id, to_seq, conversation, code, False,
                          prompt=str(target.get("content") or ""))
    op = new_id("rw")
    ref_to = _snapshot_ref(s, to_seq) if code else None
    if ref_to is not None:
        # a rewind that a crash left half-done: its undo must give back the files as they
        # were before *it*, not the half-rewound tree this one starts from
        half = s.timeline.incomplete()
        first = ""
        if half is not None and half.start is not None and half.undo_of is None:
            first = str(half.start.get("undo_to") or half.start.get("ref_from") or "")
        _restore(writer, s.repo, ref_to, op, result, undoes=None, conversation=conversation,
                 undo_to=first if first and s.repo.has(first) else None)
    if conversation:
        _close_approvals(writer, s)
        rec: Record = {"type": "rewind", "to_seq": to_seq,
                       "to_message_id": str(target.get("id") or ""),
                       "abandoned_from_seq": to_seq,
                       "abandoned_to_seq": len(s.transcript.messages)}
        result.thread_id = _reseed(writer, s, settings, rec, op)
    return result


def _close_approvals(writer: SessionWriter, s: _Session) -> None:
    """An approval still awaited is denied before its call leaves the view, as a deny by
    the user is (decision, outcome, tool result): the new thread holds no interrupt to
    ask it again, and an undo brings the exchange back complete."""
    reason = "the conversation was rewound before this call"
    for request_id, request in list(s.transcript.open_requests.items()):
        calls = request.get("tool_calls") or []
        items: list[tuple[str, dict[str, object]]] = [("approval_decision", {
            "request_id": request_id, "decisions": {c.get("call_id", ""): "deny" for c in calls},
            "reason": reason})]
        for c in calls:
            message: Message = {"id": new_id("msg"), "role": "tool", "status": "sent",
                                "content": f"denied: {reason}; it was not run",
                                "tool_call_id": c.get("call_id", ""),
                                "name": c.get("tool_name", "")}
            items.append(("tool_outcome", {"run_id": request.get("run_id", ""),
                                           "call_id": c.get("call_id", ""), "status": "denied"}))
            items.append(("transcript_message", {"message": dict(message)}))
            s.transcript.messages.append(message)
        writer.append_many(items)
        s.transcript.open_requests.pop(request_id, None)


def undo_rewind(service: SessionService, settings: Settings, ref: str) -> RewindResult:
    """Undo the last rewind of session ``ref`` (also one a crash left half-done)."""
    info = service.resolve(ref)
    writer = service.open_session(info.path)
    try:
        return undo_open(writer, service, settings, info=info)
    finally:
        writer.close()


def undo_open(writer: SessionWriter, service: SessionService, settings: Settings, *,
              info: SessionInfo | None = None) -> RewindResult:
    """The undo on a session this process holds open."""
    info = info or service.get(writer.session_id)
    s = _load(service, info)
    # an undo a crash left half-done is finished (its rewind already counts as undone)
    half = s.timeline.incomplete()
    redo = half.undo_of if half is not None else None
    last: RewindOp | None = s.timeline.op(redo) if redo else s.timeline.last_undoable()
    if last is None:
        raise RewindRefused(f"session {info.id} has no rewind to undo")
    done = last.rewind
    result = RewindResult(info.id, int(done["to_seq"]) if done else None,
                          done is not None, last.start is not None, False)
    op = new_id("rw")
    if last.start is not None:
        ref_to = str(last.start.get("undo_to") or last.start.get("ref_from") or "")
        if not s.repo.has(ref_to):
            raise RewindRefused(f"the snapshot {ref_to} of that rewind is gone")
        _restore(writer, s.repo, ref_to, op, result, undoes=last.op,
                 conversation=done is not None)
    if done is not None:
        count = len(s.transcript.messages)
        rec: Record = {"type": "rewind", "undo": True, "to_seq": done.get("to_seq", 0),
                       "to_message_id": done.get("to_message_id", ""),
                       "abandoned_from_seq": int(done.get("abandoned_to_seq") or 0) + 1,
                       "abandoned_to_seq": count,
                       "restored_from_seq": done.get("abandoned_from_seq", 0),
                       "restored_to_seq": done.get("abandoned_to_seq", 0), "undoes": last.op}
        result.thread_id = _reseed(writer, s, settings, rec, op)
    elif last.start is None:
        raise RewindRefused("that rewind changed nothing to undo")
    return result


def _restore(writer: SessionWriter, repo: ShadowRepo, ref_to: str, op: str,
             result: RewindResult, *, undoes: str | None, conversation: bool = False,
             undo_to: str | None = None) -> None:
    extra: dict[str, object] = {"undoes": undoes} if undoes else {}
    if conversation:  # the ``rewind`` record is due after the files (a crash warns)
        extra["conversation"] = True
    if undo_to:
        extra["undo_to"] = undo_to
    try:
        with repo.tools_quiet():  # no tool of another session changes files meanwhile
            safety = repo.snapshot("before rewind")
            writer.append("rewind_start", ref_from=safety.ref, ref_to=ref_to, op=op, **extra)
            changes = repo.restore(safety.ref, ref_to, protect=own_outputs())
    except ToolsRunning as exc:
        raise RewindRefused(str(exc)) from None
    writer.append("rewind_end", files_restored=changes.restored,
                  files_deleted=changes.deleted, op=op)
    result.files_restored, result.files_deleted = changes.restored, changes.deleted
    result.undo_ref = undo_to or safety.ref


def _reseed(writer: SessionWriter, s: _Session, settings: Settings, rec: Record,
            op: str) -> str:
    """A new thread with the model's view once ``rec`` applies; then the records."""
    from mttui.graph.seed import seed_thread, sent_contents, view_messages

    t = s.transcript
    t.last_compression, t.after_compression_from = t.rewinds.apply(
        rec, t.messages, t.last_compression, t.after_compression_from)
    summary, view = t.model_view()
    thread_id = seed_thread(writer, settings, project=Path(s.info.project),
                            checkpoints_path=s.checkpoints_path,
                            messages=view_messages(summary, list(view), sent_contents(
                                s.checkpoints_path, t.thread_ids, view), t.steer_ids))
    fields = {k: v for k, v in rec.items() if k != "type"}
    writer.append_many([("rewind", {**fields, "thread_id": thread_id, "op": op}),
                        ("session_update", {"thread_id": thread_id})])
    return thread_id


def rewind_held(handle: SessionHandle, service: SessionService, settings: Settings,
                to_seq: int | None, *, conversation: bool = True,
                code: bool = True) -> RewindResult:
    """The rewind (``to_seq``) or, with ``to_seq=None``, the undo, on a session this
    process holds open through ``handle``: refused while a run is active; the runner
    forgets what it cached of the checkpoint (the thread changed under it)."""
    if handle.busy:
        raise RewindRefused("a run is active: stop it first")
    if to_seq is None:
        result = undo_open(handle.writer, service, settings)
    else:
        result = rewind_open(handle.writer, service, settings, to_seq,
                             conversation=conversation, code=code)
    handle.runner.invalidate()
    return result
