"""Plain domain events a run yields (no LangGraph, no Textual types).

The CLI prints them as JSON lines; the UI turns them into Textual messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunStarted:
    run_id: str


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant answer being streamed (not logged one by one)."""

    message_id: str
    text: str


@dataclass(frozen=True)
class MessageAdded:
    """A transcript message was appended (``message`` is the storage.md object)."""

    message: dict[str, Any]


@dataclass(frozen=True)
class ApprovalRequested:
    request_id: str
    run_id: str
    tool_calls: list[dict[str, Any]]  # call_id, tool_name, arguments, risk_level
    asked_again: bool = False  # shown again after a resume


@dataclass(frozen=True)
class ApprovalDecided:
    request_id: str
    decisions: dict[str, str]  # call_id -> approve | deny
    reason: str | None = None
    remember: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ToolDispatched:
    """Emitted only after the ``tool_dispatch`` record is fsynced."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    tool_name: str
    status: str  # success | error | denied | cancelled | interrupted
    output: str


@dataclass(frozen=True)
class Compressed:
    removed_count: int
    kept_count: int
    tokens_before: int
    tokens_after: int
    summary: str
    trigger: str


@dataclass(frozen=True)
class UsageUpdated:
    input_tokens: int
    output_tokens: int
    estimated: bool


@dataclass(frozen=True)
class RunEnded:
    run_id: str
    status: str  # completed | stopped | error | awaiting_approval | interrupted
    error: str | None = None


@dataclass(frozen=True)
class Notice:
    """Something the user should read that is not part of the transcript."""

    level: str  # info | warning | error
    text: str


@dataclass(frozen=True)
class ModelRetry:
    """A model request failed before its answer began (a timeout, a lost connection,
    HTTP 429 or 5xx) and is sent again after ``delay`` seconds: retry ``attempt`` of
    ``retries``."""

    attempt: int
    retries: int
    reason: str  # "timeout", "connection error", "HTTP 503"
    delay: float

    @property
    def text(self) -> str:
        return f"retrying {self.attempt}/{self.retries} after {self.reason}"


@dataclass(frozen=True)
class PendingChanged:
    """Pending inputs changed during a run (steers read, a queue item taken or back at
    the head); the lane is read again from ``pending_runtime.PendingInputs``."""

    reason: str = ""


@dataclass(frozen=True)
class ToolOutput:
    """The live tail of a running tool's output (capped; at most every 0.2 s)."""

    call_id: str
    tail: str


RunEvent = (
    RunStarted
    | TextDelta
    | MessageAdded
    | ApprovalRequested
    | ApprovalDecided
    | ToolDispatched
    | ToolFinished
    | Compressed
    | UsageUpdated
    | RunEnded
    | Notice
    | PendingChanged
    | ToolOutput
    | ModelRetry
)

# where a node or the journal hands its events (LangGraph's stream writer, a list's append)
Emit = Callable[[RunEvent], None]
