"""Status badges of a session: ⏸ awaiting approval, ⚠ interrupted tool,
⧗ N queued, ✗ corrupt lines."""

from __future__ import annotations

from rich.text import Text

from mttui.session.models import SessionInfo, SessionStatus

from .glyphs import glyph


def badges(status: SessionStatus) -> Text:
    out = Text(no_wrap=True)

    def add(text: str, style: str) -> None:
        if out:
            out.append(" ")
        out.append(text, style=style)

    if status.awaiting_approval:
        add(glyph("pause"), "bold yellow")
    if status.interrupted_tools:
        n = status.interrupted_tools
        add(f"{glyph('warn')}{n if n > 1 else ''}", "bold red")
    if status.queued:
        add(f"{glyph('wait')}{status.queued}", "cyan")
    if status.corrupt_lines:
        add(f"{glyph('fail')}{status.corrupt_lines}", "red")
    return out


def fork_badge(info: SessionInfo) -> Text:
    """``⑂`` for a fork, ``⑂!`` for one whose copy was interrupted (the title says
    "incomplete fork"; known from the listing, nothing is read here)."""
    if info.fork_incomplete:  # its copy was interrupted: not a session to go on with
        return Text("⑂! ", style="bold red", no_wrap=True)
    return Text("⑂ ", style="bold magenta", no_wrap=True) if info.fork else Text(no_wrap=True)
