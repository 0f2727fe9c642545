"""The completion list above the prompt: slash commands on ``/``, project files on ``@``.

It never takes the focus: the prompt hands it ``up``/``down`` (move), ``tab``/``enter``
(complete: the typed word is replaced) and ``escape`` (close) while it is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

_SLASH = re.compile(r"^/([A-Za-z0-9_-]*)$")
_AT = re.compile(r'(?:^|(?<=[\s(]))@([^\s@`"]*)$')


@dataclass(frozen=True)
class Trigger:
    """What the text before the cursor asks to complete: ``kind`` (``slash`` | ``file``),
    the typed ``query`` and the column where the replaced word starts."""

    kind: str
    query: str
    start: int


def trigger_at(line: str) -> Trigger | None:
    """The completion the text before the cursor (``line``, one line) calls for."""
    m = _SLASH.match(line)
    if m is not None:
        return Trigger("slash", m.group(1), 0)
    m = _AT.search(line)
    if m is not None:
        return Trigger("file", m.group(1), m.start())
    return None


def trigger_of(area: TextArea) -> Trigger | None:
    """The completion the text before ``area``'s cursor calls for."""
    if not area.text:
        return None
    row, col = area.cursor_location
    return trigger_at(area.document.get_line(row)[:col])


class CompletionList(OptionList):
    """A short list of choices shown above the prompt (hidden when empty)."""

    DEFAULT_CSS = """
    CompletionList { height: auto; max-height: 10; display: none; border: round $accent 60%;
                     background: $surface; padding: 0 1; }
    CompletionList.-visible { display: block; }
    """
    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.target: TextArea | None = None
        self.trigger: Trigger | None = None
        self.values: list[str] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-visible")

    def show(self, trigger: Trigger, rows: list[tuple[str, str, str]]) -> None:
        """``rows``: (value inserted, label, hint); an empty list hides the list."""
        self.trigger = trigger
        self.values = [r[0] for r in rows]
        self.clear_options()
        if not rows:
            self.hide()
            return
        width = max(len(r[1]) for r in rows)
        for _value, label, hint in rows:
            text = Text(label, style="bold", no_wrap=True, overflow="ellipsis")
            if hint:
                text.append(" " * (width - len(label) + 2) + hint, style="dim")
            self.add_option(Option(text))
        self.highlighted = 0
        self.add_class("-visible")

    def hide(self) -> None:
        self.remove_class("-visible")
        self.trigger = None

    def take_key(self, key: str) -> bool:
        """Act on ``key`` while shown (``True``: used, the prompt must ignore it)."""
        if not self.shown:
            return False
        if key == "escape":
            self.hide()
            return True
        if key in ("up", "down"):
            count = len(self.values)
            now = self.highlighted or 0
            self.highlighted = (now + (1 if key == "down" else -1)) % count
            return True
        if key in ("tab", "enter"):
            if self.target is None or trigger_of(self.target) != self.trigger:
                self.hide()  # typed on faster than the list followed: the key is the text's
                return False
            self.complete()
            return True
        return False

    def complete(self) -> None:
        """Replace the typed word with the highlighted choice."""
        target, trigger = self.target, self.trigger
        index = self.highlighted or 0
        if target is None or trigger is None or not 0 <= index < len(self.values):
            self.hide()
            return
        value = self.values[index]
        row, col = target.cursor_location
        target.replace(value, (row, trigger.start), (row, col), maintain_selection_offset=False)
        self.hide()
