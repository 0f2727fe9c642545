"""A running tool's block: a spinner, the seconds it has run and the tail of its output."""

from __future__ import annotations

import time

from rich.padding import Padding
from rich.style import Style
from rich.text import Text

from .glyphs import spinner
from .history_items import Item
from .text import literal

TAIL_LINES = 6  # lines of output shown under a collapsed running block
TAIL_EXPANDED = 30


def running_label(item: Item) -> Text:
    """``⠙ running 12s``: the spinner steps with the clock, so every redraw moves it."""
    seconds = time.monotonic() - float(item.data.get("started", time.monotonic()))
    return Text(f"{spinner(int(seconds * 4))} running {int(seconds)}s", style="cyan")


def live_tail(item: Item, dim: Style, lines: int = TAIL_LINES) -> Padding:
    """The last ``lines`` lines of the output so far (``waiting for output…`` before)."""
    tail = str(item.data.get("tail") or "")
    shown = tail.rstrip("\n").splitlines()[-lines:]
    if not shown:
        return Padding(Text("waiting for output…", style=dim), (0, 0, 0, 4))
    return Padding(Text(literal("\n".join(shown)), style=dim, no_wrap=True,
                        overflow="ellipsis"), (0, 0, 0, 4))
