"""The short hint a new chat shows until its first message: where, which model, how
approvals work, the offline triggers (offline only) and the keys worth knowing."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

KEYS = ("enter send · ctrl+j newline · ↑ earlier prompts · esc stop · ctrl+s steer · "
        "ctrl+o sessions · f1 help")
TRIGGERS = "!CMD  /read P  /ls [P]  /grep RE  /write P TEXT  /edit P OLD => NEW"


def hint_renderable(project: str, provider: str, model: str, approval: str) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    grid.add_row("project", Text(project))
    grid.add_row("model", Text(f"{provider} · {model}"))
    grid.add_row("approval", Text(approval + ("  (every tool runs without asking)"
                                              if approval == "yolo" else "")))
    if provider == "offline":
        grid.add_row("offline", Text(TRIGGERS))
    grid.add_row("keys", Text(KEYS))
    return grid


class NewChatHint(Static):
    DEFAULT_CSS = """
    NewChatHint { height: auto; padding: 0 1; margin: 0 0 0 0; color: $text-muted;
                  border-left: thick $primary 50%; }
    """
