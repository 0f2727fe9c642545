"""Huge message text shown clipped: rendering megabytes would freeze the screen."""

from __future__ import annotations

SHOWN = 20_000  # characters of one message rendered in the chat


def clipped(text: str, limit: int = SHOWN) -> tuple[str, str]:
    """``(text to render, note)``: the note says how much was left out and where to see it."""
    if len(text) <= limit:
        return text, ""
    cut = text.rfind("\n", limit // 2, limit)
    cut = cut if cut > 0 else limit
    rest = len(text) - cut
    return text[:cut], (
        f"[clipped: {rest:,} more characters not shown here; "
        "`mttui export SESSION` or `mttui history SESSION --json` shows the whole message]"
    )
