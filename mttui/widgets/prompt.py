"""The prompt: a multi-line TextArea where enter sends and ctrl+j adds a newline."""

from __future__ import annotations

from textual import events
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
        Binding("enter", "submit", "Send", id="send"),
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="newline", key_display="ctrl+j"),
    ]

    class Submitted(Message):
        def __init__(self, prompt: PromptArea, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         placeholder=placeholder, highlight_cursor_line=False)
        self._keymap_seen: dict[str, str] | None = None
        self._keys: dict[str, str] = {}

    async def _on_key(self, event: events.Key) -> None:
        """Send/newline keys are handled here, in typing order: a priority binding would
        act before the characters typed just before it reach the text."""
        action = self._action_for(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)
            return
        await super()._on_key(event)

    def _action_for(self, key: str) -> str | None:
        keymap = dict(getattr(self.app, "_keymap", {}) or {})
        if self._keymap_seen != keymap:
            bindings = self._bindings.copy()
            if keymap:
                bindings.apply_keymap(keymap)
            self._keys = {k: b[0].action for k, b in bindings.key_to_bindings.items()
                          if b and b[0].action in ("submit", "newline")}
            self._keymap_seen = keymap
        return self._keys.get(key)

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)
