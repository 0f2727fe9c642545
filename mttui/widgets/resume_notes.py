"""What the resume of the open session will do, above the prompt (before it is applied)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from .text import literal


def notes_renderable(warnings: Sequence[Mapping[str, object]], *, approval: bool,
                     decided: bool) -> Table:
    """One line per warning, in order: the plain words first, the code second."""
    grid = Table.grid(padding=(0, 1, 0, 0), expand=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for w in warnings:
        line = Text(literal(str(w.get("message", ""))))
        line.append(f"  ({w.get('code', '')})", style="dim")
        grid.add_row(Text("⚠", style="yellow"), line)
    if decided:
        grid.add_row(Text("⟳", style="yellow"), Text(
            "An approval was decided before the stop: it is applied when you send a "
            "message or resume the queue (ctrl+r)."))
    when = "when you answer the approval" if approval else \
        "when you send a message or resume the queue"
    grid.add_row("", Text(f"Nothing is written until then: the resume is applied {when}.",
                          style="dim"))
    return grid


class ResumeNotes(Static):
    """The resume warnings of a session just opened; gone once the resume is applied
    (the history shows them inline where it happened)."""

    DEFAULT_CSS = """
    ResumeNotes { height: auto; max-height: 8; padding: 0 1; border-left: thick $warning;
                  background: $warning 10%; }
    """

    def show(self, warnings: Sequence[Mapping[str, object]], *, approval: bool,
             decided: bool) -> None:
        self.update(notes_renderable(warnings, approval=approval, decided=decided))
