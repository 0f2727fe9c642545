"""Small modal dialogs: rename a session, confirm a deletion."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Static

from mttui.widgets.text import literal
from mttui.widgets.typed_input import TypedInput

DIALOG_CSS = """
{name} {{ align: center middle; background: $background 60%; }}
{name} > Vertical {{
    width: 64; height: auto; padding: 1 2; background: $panel;
    border: round $primary;
}}
{name} .title {{ text-style: bold; margin-bottom: 1; }}
{name} .hint {{ color: $text-muted; margin-top: 1; }}
{name} Horizontal {{ height: auto; align-horizontal: right; margin-top: 1; }}
{name} Button {{ margin-left: 2; min-width: 12; }}
"""


class RenameScreen(ModalScreen[str | None]):
    """Ask for a new title; returns it, or ``None`` when cancelled."""

    DEFAULT_CSS = DIALOG_CSS.format(name="RenameScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.current = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Rename session", classes="title")
            yield TypedInput(self.current, placeholder="a title", id="title")
            yield Static("enter saves · escape cancels", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        title = " ".join(event.value.split())
        self.dismiss(title or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; ``y``/``enter`` confirm, ``n``/``escape`` cancel."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmScreen") + """
    ConfirmScreen > Vertical { border: round $error; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, question: str, *, yes: str = "Delete") -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="title")
            yield Static(Text(literal(self.question)))
            with Horizontal():
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.yes} (y)", variant="error", id="yes")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
