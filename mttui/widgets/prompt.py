"""The prompt: a multi-line TextArea where enter sends and ctrl+j adds a newline."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class PromptArea(TextArea):
    """``enter`` sends; ``ctrl+j`` (every terminal) or ``shift+enter`` (terminals that
    report it, e.g. with the kitty keyboard protocol) inserts a newline."""

    DEFAULT_CSS = """
    PromptArea { height: auto; min-height: 3; max-height: 10; border: round $primary 60%;
                 background: $surface; padding: 0 1; }
    PromptArea:focus { border: round $primary; }
    PromptArea.-busy { border: round $warning 60%; }
    """
    BINDINGS = [
        Binding("enter", "submit", "Send", id="send", priority=True),
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="newline", priority=True,
                key_display="ctrl+j"),
    ]

    class Submitted(Message):
        def __init__(self, prompt: PromptArea, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         placeholder=placeholder, highlight_cursor_line=False)

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)
