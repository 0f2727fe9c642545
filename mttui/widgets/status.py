"""The chat status bar: model, run state, tokens, compressions, approval mode, grants."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from .text import tokens

STATE_STYLE = {
    "idle": ("● idle", "green"),
    "starting": ("⟳ starting", "cyan"),
    "running": ("⟳ running", "cyan"),
    "stopping": ("⏹ stopping", "yellow"),
    "awaiting approval": ("⏸ awaiting approval", "bold yellow"),
    "read-only": ("⊘ read-only", "red"),
    "opening": ("⟳ opening", "cyan"),
}


class StatusBar(Widget):
    """One line; every shown value is a reactive, so assigning it repaints the bar."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    provider: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    approval: reactive[str] = reactive("")
    token_limit: reactive[int] = reactive(0)
    state: reactive[str] = reactive("idle")
    used: reactive[int] = reactive(0)  # tokens of the last model call
    estimated: reactive[bool] = reactive(False)
    compressions: reactive[int] = reactive(0)
    note: reactive[str] = reactive("")
    grants: reactive[int] = reactive(0)  # tools approved for the session
    context_left: reactive[int] = reactive(-1)  # % of token_limit left (-1: unknown)
    cost: reactive[str] = reactive("")  # the session's cost, when prices are configured

    def __init__(self, *, provider: str, model: str, approval: str, token_limit: int,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.provider = provider
        self.model = model
        self.approval = approval
        self.token_limit = token_limit

    def render(self) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.provider == "offline":
            line.append(" offline model ", style="bold black on yellow")
            line.append(" ")
        else:
            line.append(self.provider, style="dim")
            line.append(" · ", style="dim")
        line.append(self.model, style="bold")
        label, style = STATE_STYLE.get(self.state, (self.state, ""))
        line.append("   ")
        line.append(label, style=style)
        used = ("~" if self.estimated else "") + tokens(self.used)
        line.append(f"   tokens {used} / {tokens(self.token_limit)}", style="")
        if self.context_left >= 0:
            low = self.context_left < 20
            line.append(f" · {self.context_left}% left", style="bold yellow" if low else "")
        if self.cost:
            line.append(f" · {self.cost}", style="")
        line.append(f"   compressions {self.compressions}", style="dim" if not self.compressions
                    else "")
        line.append("   approval ", style="dim")
        line.append(self.approval, style="bold red" if self.approval == "yolo" else "bold")
        if self.grants:
            line.append(f" · grants {self.grants}", style="bold yellow")
        if self.note:
            line.append("   " + self.note, style="dim")
        return line
