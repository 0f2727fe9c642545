"""Which records are conversation activity: they set a session's ``updated_at``.

Opening, renaming or closing a session is not activity, so none of them moves it
to the top of the session list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..record_types import Record

# records that describe the session, not its conversation
NOT_ACTIVITY = frozenset({"session_end", "session_resumed", "grant_revoked"})


def is_activity(rec: Record) -> bool:
    """``True`` unless ``rec`` only renames, re-labels, resumes or closes the session
    (a ``session_update`` that starts a new thread, a clear, is activity)."""
    kind = rec.get("type")
    if kind == "session_update":
        return bool(rec.get("thread_id"))
    return kind not in NOT_ACTIVITY
