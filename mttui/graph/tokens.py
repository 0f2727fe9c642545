"""Local token estimate, used whenever the provider sends no usage.

The approximation is deliberately simple and documented: **one token per four
characters** of text (content plus tool-call arguments), plus four tokens of
overhead per message. It errs on the high side for code and English, which is
the safe side for deciding when to compress.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
PER_MESSAGE = 4


def text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
        return "".join(parts)
    return str(content or "")


def message_tokens(message: Any) -> int:
    """Estimate for one LangChain message (or any object with ``content``/``tool_calls``)."""
    text = _content_text(getattr(message, "content", ""))
    # Only assistant messages carry calls; asking a pydantic message for a field it
    # lacks costs an exception, which dominated the estimate of long histories.
    calls = (getattr(message, "tool_calls", None) or []) if message.type == "ai" else []
    if calls:
        text += json.dumps([{"n": c.get("name"), "a": c.get("args")} for c in calls])
    return text_tokens(text) + PER_MESSAGE


def estimate_tokens(messages: Iterable[Any]) -> int:
    return sum(message_tokens(m) for m in messages)
