"""The chat status bar: model, run state, tokens, compressions, approval mode, grants."""

from __future__ import annotations

import time

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from .glyphs import glyph, spinner
from .text import literal, tokens

BUSY = ("starting", "running", "stopping", "opening")  # a spinner and the seconds
GLYPH = {"idle": "ok", "starting": "spin", "running": "spin", "stopping": "stop",
         "awaiting approval": "pause", "read-only": "no", "opening": "spin"}

STATE_STYLE = {
    "idle": ("● idle", "green"),
    "starting": ("⟳ starting", "cyan"),
    "running": ("⟳ running", "cyan"),
    "stopping": ("⏹ stopping", "yellow"),
    "awaiting approval": ("⏸ awaiting approval", "bold yellow"),
    "read-only": ("⊘ read-only", "red"),
    "opening": ("⟳ opening", "cyan"),
}


def state_label(state: str, frame: int, elapsed: int) -> tuple[str, str]:
    """The run state as shown: a glyph (a spinner while busy), words, seconds."""
    label, style = STATE_STYLE.get(state, (state, ""))
    words = label.split(" ", 1)[-1] if state in STATE_STYLE else label
    if state in BUSY:
        return f"{spinner(frame)} {words} {elapsed}s", style
    mark = GLYPH.get(state)
    return (f"{glyph(mark)} {words}" if mark else label), style


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
    frame: reactive[int] = reactive(0)  # the spinner's step while busy

    def __init__(self, *, provider: str, model: str, approval: str, token_limit: int,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.provider = provider
        self.model = model
        self.approval = approval
        self.token_limit = token_limit
        self.busy_since: float | None = None

    def on_mount(self) -> None:
        self.set_interval(0.25, self._tick)

    def _tick(self) -> None:
        if self.busy_since is not None:
            self.frame += 1

    def watch_state(self, old: str, new: str) -> None:
        if new not in BUSY:
            self.busy_since = None
        elif self.busy_since is None or old not in BUSY:
            self.busy_since = time.monotonic()

    def elapsed(self) -> int:
        """Whole seconds of the current run (0 when idle)."""
        return 0 if self.busy_since is None else int(time.monotonic() - self.busy_since)


    def render(self) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.provider == "offline":
            line.append(" offline model ", style="bold black on yellow")
            line.append(" ")
        else:
            line.append(self.provider, style="dim")
            line.append(" · ", style="dim")
        line.append(literal(self.model), style="bold")
        label, style = state_label(self.state, self.frame, self.elapsed())
        line.append("   ")
        line.append(label, style=style)
        early = self.state == "read-only" and bool(self.note)
        if early:  # why it is read-only (the pid) before anything that may be cut
            line.append(f" ({self.note})", style=style)
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
        if self.note and not early:
            line.append("   " + self.note, style="dim")
        return line
