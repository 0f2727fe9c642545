"""The record contract v1 (storage.md, pending.md) as types.

One ``TypedDict`` per record type, for code that writes or reads that type, and
:class:`Record`, any record as the tolerant reader returns it: every known field,
none promised but ``type`` and ``seq`` (the reader checks only those two; unknown
fields pass through untyped). JSON values without a fixed shape are :data:`JSON`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypedDict

JSON: TypeAlias = "str | int | float | bool | None | list[JSON] | dict[str, JSON]"
JSONObject: TypeAlias = "dict[str, JSON]"


class Usage(TypedDict, total=False):
    input_tokens: int
    output_tokens: int
    estimated: bool


class ToolCall(TypedDict, total=False):
    """A tool call of an assistant message."""

    id: str
    name: str
    args: JSONObject
    type: str


class Attachment(TypedDict):
    path: str
    sha256: str
    bytes: int


class Message(TypedDict, total=False):
    """The ``message`` object of a transcript message (``created_at`` is added on reading)."""

    id: str
    role: str  # user | assistant | tool | system
    content: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    status: str  # sent | pending | error | interrupted
    usage: Usage
    read_at: str
    error: str
    created_at: str | None  # the record's timestamp, if it has one
    attachments: list[Attachment]
    steer: bool  # a fork's copy of a message that came as a Steer


class ApprovalCall(TypedDict, total=False):
    """One tool call of an ``approval_request``."""

    call_id: str
    tool_name: str
    arguments: JSONObject
    risk_level: str


class Head(TypedDict):
    """What every record has."""

    type: str
    seq: int
    timestamp: str
    session_id: str


class SessionStart(Head, total=False):
    v: int
    thread_id: str
    project: str
    project_hash: str
    provider: str
    model: str
    title: str | None
    app_version: str
    forked_from: JSONObject


class TranscriptMessage(Head):
    message: Message


class MessageUpdate(Head, total=False):
    message_id: str
    status: str
    content: str
    read_at: str
    error: str


class RunStart(Head, total=False):
    run_id: str
    continues: bool | str  # true, or the id of the approval request whose answer resumes


class RunEnd(Head, total=False):
    run_id: str
    status: str  # completed | stopped | error | interrupted | awaiting_approval
    error: str
    usage: Usage


class ApprovalRequest(Head, total=False):
    request_id: str
    run_id: str
    tool_calls: list[ApprovalCall]


class ApprovalDecision(Head, total=False):
    request_id: str
    decisions: dict[str, str]  # call_id: approve | deny
    reason: str
    remember: list[str]


class GrantRevoked(Head, total=False):
    """Tools approved for the session (``approval_decision.remember``) that ask again."""

    tools: list[str]


class ToolDispatch(Head, total=False):
    run_id: str
    call_id: str
    tool_name: str
    arguments_sha256: str


class ToolOutcome(Head, total=False):
    run_id: str
    call_id: str
    status: str  # success | error | denied | cancelled | interrupted


class Compression(Head, total=False):
    summary: str
    removed_count: int
    kept_count: int
    kept_message_ids: list[str]
    trigger: str  # auto | manual
    tokens_before: int
    tokens_after: int


class SessionUpdate(Head, total=False):
    title: str
    provider: str
    model: str
    thread_id: str


class SessionResumed(Head, total=False):
    mode: str  # execution | transcript
    warnings: list[str]


class SessionEnd(Head, total=False):
    stats: dict[str, int]


class PendingItem(Head, total=False):
    """``pending_add``/``_edit``/``_move``/``_remove``/``_fail``/``_retry``/``_held``."""

    item_id: str
    mode: str  # queue | steer
    text: str
    position: int
    error: str


class PendingMessage(PendingItem, total=False):
    """``pending_steer`` and ``pending_take``: an item and the user message it became."""

    message: Message


class PendingRead(Head, total=False):
    item_ids: list[str]
    message_ids: list[str]
    run_id: str
    read_at: str


class SessionClear(Head, total=False):
    """``/clear``: a new thread; the model starts from nothing (essentials.md)."""

    thread_id: str


class FileCheckpoint(Head, total=False):
    run_id: str
    before_seq: int  # the message seq of the user message whose turn it precedes
    ref: str | None  # a commit of the project's shadow repository; None: the snapshot failed
    files: int
    skipped: list[str]
    message_id: str  # that user message (seqs move when a steer is read; ids do not)
    error: str  # why the snapshot failed


class Rewind(Head, total=False):
    to_seq: int
    to_message_id: str
    abandoned_from_seq: int
    abandoned_to_seq: int
    thread_id: str
    undo: bool  # an undo: restored_* come back into the model's view
    restored_from_seq: int
    restored_to_seq: int


class RewindStart(Head, total=False):
    ref_from: str  # the safety snapshot (the files before the rewind)
    ref_to: str


class RewindEnd(Head, total=False):
    files_restored: list[str]
    files_deleted: list[str]


class ToolResolution(Head, total=False):
    call_id: str
    resolution: str  # done | failed | rerun
    note: str


# every record type this version writes and reads, with its fields
RECORD_TYPES: Mapping[str, type] = {
    "session_start": SessionStart,
    "transcript_message": TranscriptMessage,
    "message_update": MessageUpdate,
    "run_start": RunStart,
    "run_end": RunEnd,
    "approval_request": ApprovalRequest,
    "approval_decision": ApprovalDecision,
    "grant_revoked": GrantRevoked,
    "tool_dispatch": ToolDispatch,
    "tool_outcome": ToolOutcome,
    "compression": Compression,
    "session_update": SessionUpdate,
    "session_resumed": SessionResumed,
    "session_end": SessionEnd,
    "pending_add": PendingItem,
    "pending_edit": PendingItem,
    "pending_move": PendingItem,
    "pending_remove": PendingItem,
    "pending_take": PendingMessage,
    "pending_read": PendingRead,
    "pending_fail": PendingItem,
    "pending_steer": PendingMessage,
    "pending_retry": PendingItem,
    "pending_held": PendingItem,
    "session_clear": SessionClear,
    "file_checkpoint": FileCheckpoint,
    "rewind": Rewind,
    "rewind_start": RewindStart,
    "rewind_end": RewindEnd,
    "tool_resolution": ToolResolution,
}


class Record(TypedDict, total=False):
    """Any record as read (the fields of every type above, and older spellings)."""

    type: str
    seq: int
    timestamp: str
    session_id: str
    v: int
    thread_id: str
    project: str
    project_hash: str
    provider: str
    model: str
    title: str | None
    app_version: str
    forked_from: JSONObject
    message: Message
    message_id: str
    status: str
    content: str
    read_at: str
    error: str
    run_id: str
    continues: bool | str  # true, or the id of the approval request whose answer resumes
    usage: Usage
    request_id: str
    tool_calls: list[ApprovalCall]
    decisions: dict[str, str]
    reason: str
    remember: list[str]
    tools: list[str]
    call_id: str
    tool_name: str
    arguments_sha256: str
    summary: str
    removed_count: int
    kept_count: int
    kept_message_ids: list[str]
    trigger: str
    tokens_before: int
    tokens_after: int
    mode: str
    warnings: list[str]
    stats: dict[str, int]
    item_id: str
    pending_id: str  # an older spelling of item_id
    id: str  # the oldest one
    text: str
    position: int
    item_ids: list[str]
    message_ids: list[str]
    # time travel (timetravel.md)
    before_seq: int
    ref: str
    files: int
    skipped: list[str]
    to_seq: int
    to_message_id: str
    abandoned_from_seq: int
    abandoned_to_seq: int
    restored_from_seq: int
    restored_to_seq: int
    undo: bool
    ref_from: str
    ref_to: str
    files_restored: list[str]
    files_deleted: list[str]
    resolution: str
    note: str
    op: str
    undoes: str
