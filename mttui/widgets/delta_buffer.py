"""Streamed text handed from a worker thread to the UI in batches.

Posting one message per token floods the screen's queue: an 8 000-token answer
sent as fast as a server can made the chat seconds late and kept keys waiting
behind the tokens. Deltas are buffered instead, and at most one wake-up message is
in the queue at a time; the UI takes everything buffered when it gets to it, so
the number of messages follows what the UI can draw, not the token rate. Order is
kept: the wake-up is posted before any later event of the same worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from mttui.graph.events import TextDelta


class DeltaBuffer:
    def __init__(self, wake: Callable[[], object]) -> None:
        self._wake = wake  # posts the wake-up message (thread-safe)
        self._lock = threading.Lock()
        self._items: list[TextDelta] = []
        self._woken = False

    def add(self, delta: TextDelta) -> None:
        """From the worker thread."""
        with self._lock:
            self._items.append(delta)
            wake, self._woken = not self._woken, True
        if wake:
            self._wake()

    def drain(self) -> list[TextDelta]:
        """On the UI thread: everything buffered, consecutive pieces of one message joined."""
        with self._lock:
            items, self._items, self._woken = self._items, [], False
        out: list[TextDelta] = []
        for d in items:
            if out and out[-1].message_id == d.message_id:
                out[-1] = TextDelta(d.message_id, out[-1].text + d.text)
            else:
                out.append(d)
        return out
