"""Plain result types of the session service (shared by the CLI and the UI)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from .plain import Plain, field, replace

if TYPE_CHECKING:
    from .record_types import Attachment, ToolCall, Usage

SearchScope = Literal["session", "project", "all"]


class SessionStatus(Plain):
    """Status badges derived from the log (no LangGraph needed)."""

    awaiting_approval: bool = False
    interrupted_tools: int = 0
    queued: int = 0
    corrupt_lines: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "awaiting_approval": self.awaiting_approval,
            "interrupted_tools": self.interrupted_tools,
            "queued": self.queued,
            "corrupt_lines": self.corrupt_lines,
        }

    def describe(self) -> list[tuple[str, str]]:
        """``(badge, words)`` for each active badge (the preview spells them out)."""
        out = []
        if self.awaiting_approval:
            out.append(("⏸", "awaiting approval"))
        if self.interrupted_tools:
            out.append(("⚠", f"{self.interrupted_tools} interrupted tool call(s)"))
        if self.queued:
            out.append(("⧗", f"{self.queued} queued input(s)"))
        if self.corrupt_lines:
            out.append(("✗", f"{self.corrupt_lines} corrupt line(s) skipped"))
        return out


class SessionUsage(Plain):
    """Token totals of a session's runs (``run_end.usage``); ``cost_usd`` is ``None``
    when no run was priced."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def as_json(self) -> dict[str, object]:
        cost = None if self.cost_usd is None else round(self.cost_usd, 6)
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": cost}  # fmt: skip


class SessionInfo(Plain):
    """One row of the session list."""

    id: str
    title: str | None
    project: str
    project_hash: str
    path: Path
    created_at: str
    updated_at: str
    message_count: int
    provider: str | None
    model: str | None
    thread_id: str | None
    last_message_preview: str = ""
    compression_count: int = 0
    status: SessionStatus = field(default_factory=SessionStatus)
    usage: SessionUsage = field(default_factory=SessionUsage)
    chosen_model: str | None = None  # set with /model; kept across resumes
    clear_count: int = 0
    fork: dict[str, object] | None = None  # forked_from, when the listing read it
    parent_title: str | None = None  # the title of the session this one was forked from
    fork_incomplete: bool = False  # a fork whose copy never finished (fork_state.py)

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "project": self.project,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "message_count": self.message_count,
            "provider": self.provider,
            "model": self.model,
            "thread_id": self.thread_id,
            "compression_count": self.compression_count,
            "status": self.status.as_json(),
            "forked_from": self.forked_from(),
            "incomplete": self.fork_incomplete,
            "usage": self.usage.as_json(),
        }

    def forked_from(self) -> dict[str, object] | None:
        """``{session_id, seq}`` when this session is a fork (read from its first line)."""
        if self.fork is not None:
            return self.fork or None  # {}: read, not a fork
        from .timeline import fork_origin

        return fork_origin(self.path)


class SessionPage(Plain):
    sessions: list[SessionInfo]
    next_cursor: str | None

    def with_forks(self) -> SessionPage:
        """The page with each session's ``forked_from`` (from the index; else its log's
        first line)."""
        if all(s.fork is not None for s in self.sessions):
            return self  # the index knew them all (timeline not imported)
        from .timeline import fork_origin

        sessions = [s if s.fork is not None else replace(s, fork=fork_origin(s.path) or {})
                    for s in self.sessions]
        return replace(self, sessions=sessions)


class MessageRow(Plain):
    """One transcript message at its 1-based position ``seq`` in the transcript."""

    seq: int
    id: str
    role: str
    content: str
    status: str
    created_at: str
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    usage: Usage | None = None
    attachments: list[Attachment] | None = None  # @files of a user message

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "seq": self.seq,
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "status": self.status,
            "created_at": self.created_at,
        }
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name:
            out["name"] = self.name
        if self.attachments:
            out["attachments"] = self.attachments
        return out


class HistoryPage(Plain):
    """A keyset page of messages, ascending by ``seq``.

    ``has_more``/``next_before``: older messages exist / the cursor for them.
    ``has_newer``: newer messages exist (only for ``around`` and ``after`` pages).
    """

    session_id: str
    messages: list[MessageRow]
    has_more: bool
    next_before: int | None
    has_newer: bool = False


class SearchHit(Plain):
    session_id: str
    session_title: str | None
    message_id: str
    seq: int
    role: str
    snippet: str
    score: float
    created_at: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "session_title": self.session_title,
            "message_id": self.message_id,
            "seq": self.seq,
            "role": self.role,
            "snippet": self.snippet,
            "score": self.score,
            "created_at": self.created_at,
        }


# Marks around the matched part of a snippet (plain text; the UI styles them).
SNIPPET_START = "\u27e6"  # ⟦
SNIPPET_END = "\u27e7"  # ⟧


class ReindexResult(Plain):
    """What ``reindex`` rebuilt (cli.md ``reindex --json``)."""

    sessions: int
    messages: int
    corrupt_lines: int
    seconds: float

    def as_json(self) -> dict[str, object]:
        return {
            "sessions": self.sessions,
            "messages": self.messages,
            "corrupt_lines": self.corrupt_lines,
            "seconds": round(self.seconds, 3),
        }


class Problem(TypedDict):
    """One finding (or repair) of ``doctor``."""

    session_id: str | None
    code: str
    message: str


class DoctorReport(Plain):
    """What ``doctor`` found (and, with repair, fixed). Problems: session_id, code, message."""

    sessions_checked: int
    problems: list[Problem] = field(default_factory=list)
    repaired: list[Problem] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "sessions_checked": self.sessions_checked,
            "problems": list(self.problems),
            "repaired": list(self.repaired),
        }
