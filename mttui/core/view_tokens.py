"""The tokens a session's model view holds, for the status bar when it opens.

The log's own number comes first: the usage of the newest model call (the last
50 messages). A session with none (made by another tool, or whose answers carry
no usage) gets an estimate instead, the one compression decides with (four
characters a token, four per message): the last compression's ``tokens_after``
plus the messages after it, read from the index (never the whole log).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mttui.graph.tokens import PER_MESSAGE, text_tokens
from mttui.session.markers import Marker
from mttui.session.models import MessageRow
from mttui.session.service import SessionService

PAGE = 500
MAX_ROWS = 20_000  # an estimate of a longer view without compression reads no further


def row_tokens(row: MessageRow) -> int:
    """The estimate of one message (``graph.tokens.message_tokens`` of an index row)."""
    text = row.content or ""
    if row.role == "assistant" and row.tool_calls:
        text += json.dumps([{"n": c.get("name"), "a": c.get("args")} for c in row.tool_calls])
    return text_tokens(text) + PER_MESSAGE


def estimated_view(service: SessionService, session_id: str,
                   markers: Sequence[Marker]) -> int:
    """Tokens of the model's view: the last compression's summary and kept messages
    (its ``tokens_after``), then every message after it."""
    last = next((m for m in reversed(markers) if m.kind == "compression"), None)
    after = last.anchor if last is not None else 0
    total = int(str(last.data.get("tokens_after") or 0)) if last is not None else 0
    read = 0
    while read < MAX_ROWS:
        page = service.history(session_id, after=after, limit=PAGE)
        total += sum(row_tokens(row) for row in page.messages)
        read += len(page.messages)
        if not page.has_newer or not page.messages:
            break
        after = page.messages[-1].seq
    return total


def opening_usage(service: SessionService, session_id: str,
                  markers: Sequence[Marker]) -> tuple[int, bool] | None:
    """``(tokens, estimated)`` to show when the session opens; ``None`` when empty."""
    found = service.last_usage(session_id)
    if found is not None:
        return found
    total = estimated_view(service, session_id, markers)
    return (total, True) if total else None
