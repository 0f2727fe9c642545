"""The pending-input lane between the history and the prompt (tui.md).

Shown only when there is something pending: queue items (edit, move, delete),
steer receipts (unread → read), the held state with its "Resume queue" action,
needs-retry items (retry) and steers that were never delivered (retry, dismiss).
It only displays and asks: every change is a :class:`PendingLane.Act` message
that the chat screen carries out (``screens/chat_pending.py``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from .glyphs import glyph
from .prompt import PromptArea
from .text import literal

_STATE = {
    "waiting": ("waiting", "dim"),
    "held": ("held", "yellow"),
    "needs_retry": ("needs retry · r retries", "bold red"),
    "unread": ("unread", "cyan"),
    "read": ("read ✓", "green"),
    "failed": ("not delivered · r sends again · d dismisses", "bold red"),
}


class LaneAction(StrEnum):
    """What the user asks of a pending item (or, ``RESUME``, of the held queue)."""

    EDIT = "edit"
    UP = "up"
    DOWN = "down"
    REMOVE = "remove"
    RETRY = "retry"
    RESUME = "resume"


class PendingLane(Vertical, can_focus=True):
    """Pending inputs of the open session; ``show`` gives it the rows to display."""

    DEFAULT_CSS = """
    PendingLane { height: auto; max-height: 14; border-top: solid $warning 50%;
                  padding: 0 1; background: $surface; }
    PendingLane:focus { border-top: solid $warning; }
    PendingLane #lane-head { height: 1; }
    PendingLane #lane-title { width: 1fr; color: $text-muted; }
    PendingLane #lane-resume { height: 1; min-width: 24; border: none; margin: 0; }
    PendingLane #lane-body { height: auto; }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Previous", show=False),
        Binding("down", "cursor(1)", "Next", show=False),
        Binding("e,enter", "act('edit')", "Edit queued item", id="pending.edit"),
        Binding("shift+up,K", "act('up')", "Move up", id="pending.move_up"),
        Binding("shift+down,J", "act('down')", "Move down", id="pending.move_down"),
        Binding("delete,d", "act('remove')", "Delete / dismiss", id="pending.remove"),
        Binding("r", "act('retry')", "Retry", id="pending.retry"),
    ]

    class Act(Message):
        """The user asks for ``action`` on ``item`` (``None`` for ``RESUME``)."""

        def __init__(self, action: LaneAction, item: dict[str, Any] | None) -> None:
            super().__init__()
            self.action = action
            self.item = item

    rows: reactive[list[dict[str, Any]]] = reactive(list, always_update=True, init=False)
    held: reactive[bool] = reactive(False, init=False)  # the queue waits for "Resume queue"
    cursor: reactive[int] = reactive(0, init=False)

    def compose(self) -> ComposeResult:
        with Horizontal(id="lane-head"):
            yield Static(id="lane-title")
            yield Button("Resume queue (ctrl+r)", id="lane-resume", variant="warning")
        yield Static(id="lane-body")

    def on_mount(self) -> None:
        self._redraw()

    def show(self, rows: list[dict[str, Any]], *, held: bool) -> None:
        """Display ``rows`` (``queue list`` items, plus read receipts); hidden when empty."""
        self.rows, self.held = rows, held
        self.cursor = min(self.cursor, max(len(rows) - 1, 0))

    def watch_rows(self) -> None:
        self._redraw()

    def watch_held(self) -> None:
        self._redraw()

    def watch_cursor(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        try:
            head = self.query_one("#lane-title", Static)
            resume = self.query_one("#lane-resume", Button)
            lines = self.query_one("#lane-body", Static)
        except NoMatches:
            # not composed yet, or its screen closing (children go first): rows a worker
            # read meanwhile have nothing to be drawn into; on_mount draws them
            return
        self.set_class(bool(self.rows), "-visible")
        queued = sum(r["mode"] == "queue" for r in self.rows)
        title = Text(f"Pending · {queued} queued", style="bold")
        if self.held:
            title.append("  held: nothing runs until you resume the queue", style="yellow")
        else:
            title.append("  (shift+tab: edit, move, delete)", style="dim")
        head.update(title)
        resume.display = self.held
        body = Text()
        for n, row in enumerate(self.rows):
            if n:
                body.append("\n")
            mark = f"{glyph('wait')} {row['position']}" if row["mode"] == "queue" else "↯ steer"
            label, style = _STATE.get(row["state"], (row["state"], "dim"))
            line = Text(f"{mark:<8}", style="bold")
            text = " ".join(str(row["text"]).split())
            line.append(literal(text[:70] + ("…" if len(text) > 70 else "")))
            line.append("   ")
            line.append(label, style=style)
            if row.get("error") and row["state"] == "needs_retry":
                line.append(f" ({row['error'][:50]})", style="dim")
            if n == self.cursor and self.has_focus:
                line.stylize("reverse")
            body.append_text(line)
        lines.update(body)

    def watch_has_focus(self, has_focus: bool) -> None:  # the cursor row: only when focused
        super().watch_has_focus(has_focus)
        self._redraw()

    def action_cursor(self, step: int) -> None:
        if self.rows:
            self.cursor = (self.cursor + step) % len(self.rows)

    def action_act(self, name: str) -> None:
        """``name``: a :class:`LaneAction` value (bindings pass action arguments as text)."""
        if not self.rows:
            return
        action = LaneAction(name)
        row = self.rows[self.cursor]
        self.post_message(self.Act(action, row))
        if action in (LaneAction.UP, LaneAction.DOWN) and row["mode"] == "queue":
            last = sum(r["mode"] == "queue" for r in self.rows) - 1  # the cursor follows it
            step = 1 if action is LaneAction.DOWN else -1
            self.cursor = max(0, min(self.cursor + step, last))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Act(LaneAction.RESUME, None))


class EditQueuedScreen(ModalScreen[str | None]):
    """Edit a queued text; returns the new text, or ``None`` when cancelled."""

    DEFAULT_CSS = """
    EditQueuedScreen { align: center middle; background: $background 60%; }
    EditQueuedScreen > Vertical { width: 80%; max-width: 100; height: auto; padding: 1 2;
                                  background: $panel; border: round $warning; }
    EditQueuedScreen .hint { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pending.edit_cancel")]

    def __init__(self, position: int | None, text: str) -> None:
        super().__init__()
        self.position = position
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Edit queued item {self.position or ''}".strip(), classes="title")
            yield PromptArea(id="edit-text")
            yield Static("enter saves · ctrl+j newline · escape cancels", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        area = self.query_one(PromptArea)
        area.text = self.text
        area.move_cursor(area.document.end)
        area.focus()

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        self.dismiss(event.text)

    def action_cancel(self) -> None:
        self.dismiss(None)


def pending_keys() -> list[Binding]:
    """The keys of Queue and Steer, for the help screen (longer descriptions)."""
    return [
        Binding("ctrl+s", "steer", "Steer (read at the run's next step; enter queues)",
                id="steer"),
        Binding("alt+up", "edit_last", "Edit the last queued item (empty prompt)",
                id="edit_last_queued"),
        Binding("ctrl+r", "resume_queue", "Resume or pause the queue", id="resume_queue"),
    ]
