"""A footer that always fits one line, and never loses Sessions and Help.

Textual's footer shows the keys in order and cuts what does not fit, so at 80
columns the last keys (``^o Sessions``, ``f1 Help``) were the ones lost. When the
keys are wider than the terminal this footer uses the short labels of
:data:`SHORT`, then packs the keys closer, then leaves out keys,
except those of :data:`KEEP`.
"""

from __future__ import annotations

from typing import Protocol, TypeGuard

from textual import events
from textual.app import ComposeResult
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Footer

SHORT = {"All projects": "All", "This project": "Project", "Resume / pause queue": "Queue"}
KEEP = frozenset({"back", "app.help", "help", "app.quit", "quit"})  # actions always shown
PALETTE = "-command-palette"


class FooterKey(Protocol):
    """What this footer reads of Textual's footer keys (not a public class)."""

    key_display: str
    description: str
    action: str

    def has_class(self, *names: str) -> bool: ...


def is_key(widget: Widget) -> TypeGuard[FooterKey]:
    return all(hasattr(widget, name) for name in ("key_display", "description", "action"))


def key_width(key: FooterKey, compact: bool) -> int:
    """Cells of one key as the footer draws it (key, label, padding, margin)."""
    label = len(key.key_display) + len(key.description)
    if not key.description:
        return len(key.key_display) + (1 if compact else 0)
    return label + (2 if compact else 3)


class FitFooter(Footer):
    """See the module docstring."""

    DEFAULT_CSS = """
    FitFooter.-tight FooterKey { margin-right: 1; }
    FitFooter.-tight FooterKey .footer-key--key { padding: 0; }
    FitFooter.-tight FooterKey .footer-key--description { padding: 0 0 0 1; }
    """

    def compose(self) -> ComposeResult:
        items = list(super().compose())
        for item in items:  # see _bound_compact (the palette's key is not bound)
            if not _is_palette(item):
                _bound_compact(item, self.compact)
        keys = [w for w in items if is_key(w) and not w.has_class(PALETTE)]
        if len(keys) != len([w for w in items if not _is_palette(w)]):
            yield from items  # groups of keys: left as Textual draws them
            return
        width = self.fitted_width = self.app.size.width
        palette = [w for w in items if _is_palette(w)]
        room = width - sum(key_width(p, False) + 2 for p in palette if is_key(p))
        wide = sum(key_width(k, False) for k in keys) > room
        if wide:  # 1. short labels
            for key in keys:
                key.description = SHORT.get(key.description, key.description)
        tight = wide and sum(key_width(k, False) for k in keys) > room  # 2. closer
        self.set_class(tight, "-tight")
        if sum(key_width(k, tight) for k in keys) > room:  # 3. fewer keys
            budget = room - sum(key_width(k, tight) for k in keys if k.action in KEEP)
            shown = []
            for key in keys:  # the first keys that fit, beside those always shown
                if key.action in KEEP or key_width(key, tight) <= budget:
                    budget -= 0 if key.action in KEEP else key_width(key, tight)
                    shown.append(key)
            keys = shown
        yield from (k for k in items if k in keys or k in palette)

    fitted_width = 0  # the terminal width the keys were fitted to

    def on_resize(self, event: events.Resize) -> None:
        if self.app.size.width != self.fitted_width:
            self.call_after_refresh(self.recompose)


def _bound_compact(widget: Widget, compact: bool) -> None:
    """Give a footer key its footer's ``compact`` now. Its own default (compact) would
    style it compact at mount, then the footer's value (not compact) would restyle it:
    two style updates of every key before the first frame (~0.3 ms each)."""
    reactive = getattr(type(widget), "compact", None)
    if isinstance(reactive, Reactive):
        widget.set_reactive(reactive, compact)


def _is_palette(widget: Widget) -> bool:
    return is_key(widget) and widget.has_class(PALETTE)
