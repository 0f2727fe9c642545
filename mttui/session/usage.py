"""The token usage a session last reported (the status bar shows it when a session opens)."""

from __future__ import annotations

from .models import HistoryPage


def last_usage(page: HistoryPage) -> tuple[int, bool] | None:
    """``(tokens, estimated)`` of the newest assistant message of ``page`` with usage."""
    for msg in reversed(page.messages):
        usage = msg.usage or {}
        if msg.role == "assistant" and usage:
            total = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            return total, bool(usage.get("estimated"))
    return None
