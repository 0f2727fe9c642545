"""The prompt: a multi-line TextArea where enter sends and ctrl+j adds a newline."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from .completion import CompletionList
from .typed_input import act_in_typing_order


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
        # not in the footer (the placeholder says both): at 80 columns it keeps the rest
        Binding("enter", "submit", "Send", id="send", show=False),
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="newline", key_display="ctrl+j",
                show=False),
    ]

    class Submitted(Message):
        """Enter on a text. The prompt is already empty (cleared in typing order, so
        keys typed after the enter start the next text); a handler that acts on the text
        calls :meth:`take`, else :meth:`PromptArea.give_back` returns it."""

        def __init__(self, prompt: PromptArea, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.taken = False

        def take(self) -> None:
            self.taken = True

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         placeholder=placeholder, highlight_cursor_line=False)
        self.completion: CompletionList | None = None  # the / and @ list, when the screen has one

    async def on_key(self, event: events.Key) -> None:
        """Its own keys (send, newline, backspace, ctrl+w, …) act here, in typing order
        (``typed_input``): as bindings they acted after the characters typed after them
        had reached the text. A shown completion list takes its keys."""
        if self.completion is not None and self.completion.take_key(event.key):
            event.stop()
            event.prevent_default()
            return
        await act_in_typing_order(self, event)

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self.clear()
        self.post_message(self.Submitted(self, text))

    def give_back(self, text: str) -> None:
        """A submitted text not acted on goes back, before whatever was typed since."""
        self.text = text + self.text
        self.move_cursor(self.document.end)

    def action_newline(self) -> None:
        if not self.read_only:
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
