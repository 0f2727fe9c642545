"""The prompt: a multi-line TextArea where enter sends and ctrl+j adds a newline."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from .completion import CompletionList


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
        """Send/newline keys are handled here, in typing order: a priority binding would
        act before the characters typed just before it reach the text. ``prevent_default``
        keeps the TextArea from inserting the key. A shown completion list takes its keys."""
        if self.completion is not None and self.completion.take_key(event.key):
            event.stop()
            event.prevent_default()
            return
        action = self._action_for(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)

    def _action_for(self, key: str) -> str | None:
        """``submit``/``newline`` when ``key`` is bound to it here (after the app's keymap)."""
        active = self.screen.active_bindings.get(key)
        if active is None or active.node is not self:
            return None
        action = active.binding.action
        return action if action in ("submit", "newline") else None

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
