"""How old a timestamp is, in words: the one age the CLI and the UI both show."""

from __future__ import annotations

from datetime import UTC, datetime

from .records import parse_timestamp

JUST_NOW_S = 45


def relative_time(stamp: str | None, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, then ``Nov 02`` (this year) or
    ``2025-11-02``; ``—`` when ``stamp`` is missing or not a timestamp.

    A stamp without a zone is taken as UTC (records are written in UTC).
    """
    when = parse_timestamp(stamp) if stamp else None
    if when is None:
        return "—"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (now - when).total_seconds()
    if seconds < JUST_NOW_S:
        return "just now"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes}m ago"
    hours = int(seconds // 3600)
    if hours < 24:
        return f"{hours}h ago"
    days = int(seconds // 86400)
    if days < 7:
        return f"{days}d ago"
    if when.year == now.year:
        return when.strftime("%b %d")
    return when.strftime("%Y-%m-%d")
