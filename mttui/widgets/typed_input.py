"""Editing keys acted on in typing order.

Textual runs a widget's key bindings (backspace, ctrl+w, ctrl+u, enter, …) when the
key has bubbled back up to the app, after the widget has already taken the keys read
with it from the terminal. Keys read in one chunk (typed while the app was busy, a
slow connection, a fast typist) were then applied out of order: ``abc`` backspace
``d`` enter saved ``abc``, and the chat sent ``abcd``. Here a widget's own binding
runs when its key reaches the widget, in the order the keys were typed.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input


def own_action(widget: Widget, key: str) -> str | None:
    """The action ``key`` runs on ``widget`` itself (its own binding, after the app's
    keymap), else ``None``: bindings of the screen or the app keep their way."""
    active = widget.screen.active_bindings.get(key)
    if active is None or active.node is not widget or not active.enabled:
        return None
    return active.binding.action


async def act_in_typing_order(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own binding of ``event`` now (``True``: the key is used up)."""
    action = own_action(widget, event.key)
    if action is None:
        return False
    event.stop()
    event.prevent_default()  # nor inserted, nor run again when it bubbles up
    await widget.run_action(action)
    return True


class TypedInput(Input):
    """An ``Input`` whose editing keys act in typing order (dialogs, search)."""

    async def on_key(self, event: events.Key) -> None:
        await act_in_typing_order(self, event)
