"""The record contract v1 of the session event log (storage.md)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

# The keys of record_types.RECORD_TYPES, spelt out: building its TypedDicts costs a fresh
# process several ms (a test keeps the two equal).
KNOWN_TYPES = frozenset((
    "session_start",
    "transcript_message",
    "message_update",
    "run_start",
    "run_end",
    "approval_request",
    "approval_decision",
    "grant_revoked",
    "tool_dispatch",
    "tool_outcome",
    "compression",
    "session_update",
    "session_resumed",
    "session_end",
    "pending_add",
    "pending_edit",
    "pending_move",
    "pending_remove",
    "pending_take",
    "pending_read",
    "pending_fail",
    "pending_steer",
    "pending_retry",
    "pending_held",
    "session_clear",
    "file_checkpoint",
    "rewind",
    "rewind_start",
    "rewind_end",
    "tool_resolution",
))

_FILE_RE = re.compile(r"^session-(\d{8}-\d{6})-([0-9a-f]{12})\.jsonl$")


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_timestamp(when: datetime | None = None) -> str:
    """ISO-8601 UTC with milliseconds, e.g. ``2026-11-29T17:49:28.123Z``."""
    when = (when or utc_now()).astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime | None:
    """Parse a record timestamp; ``None`` when it is not one."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def new_session_id() -> str:
    """12 lowercase hex digits."""
    import uuid  # here: a command that only reads never pays for it (start-up time)

    return uuid.uuid4().hex[:12]


def new_id(prefix: str) -> str:
    """A fresh opaque id such as ``msg-3f2a…``."""
    import uuid

    return f"{prefix}-{uuid.uuid4().hex}"


def session_filename(session_id: str, created: datetime) -> str:
    stamp = created.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"session-{stamp}-{session_id}.jsonl"


def parse_session_filename(name: str) -> tuple[str, str] | None:
    """``(creation stamp, session id)`` of a log file name, else ``None``."""
    m = _FILE_RE.match(name)
    return (m.group(1), m.group(2)) if m else None


def title_from_text(text: str, limit: int = 60) -> str:
    """A session title from the first user message: first non-empty line, ≤ 60 chars."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""
