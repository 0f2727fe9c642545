"""Texts entered while a run is busy, on their way into the queue (pending.md).

Enter can come faster than a queue write (a paste without bracketed paste, a fast
typist): one writer at a time takes the texts in the order entered, and while any
wait, a new text joins them instead of being sent past them. A text the queue
refuses goes back into the prompt (``Unsent``).
"""

from __future__ import annotations

from typing import Any

from mttui.session.errors import MttuiError

from .chat_messages import OutboxWritten, Unsent

# The chat screen (typed loosely: it imports this module); the outbox uses its
# open_pending, post_lane, post_message, run_worker, busy and chat.
ChatLike = Any


class Outbox:
    """See the module docstring; its methods run on the event loop but :meth:`_write`."""

    def __init__(self, screen: ChatLike) -> None:
        self.screen = screen
        self.texts: list[str] = []  # entered, not yet written (the writer pops the first)
        self.writing = False  # a writer runs (set and cleared on the event loop only)
        # written (or the queue kicked) while a run went: its drain may have looked
        # before, so the screen drains once that run's worker has ended
        self.late = False

    @property
    def waiting(self) -> bool:
        return bool(self.texts) or self.writing

    def add(self, text: str) -> None:
        self.texts.append(text)
        self._start()

    def _start(self) -> None:
        if not self.writing:
            self.writing = True
            self.screen.run_worker(self._write, thread=True, group="outbox",
                                   exit_on_error=False, name="queue")

    def _write(self) -> None:
        """Worker thread: queue the texts, first entered first."""
        screen = self.screen
        pending = screen.open_pending()
        refused: list[str] = []
        why = ""
        while self.texts:
            text = self.texts.pop(0)
            try:
                if pending is None:
                    raise MttuiError(screen.chat.read_only or "this session cannot be written")
                pending.add(text)
            except MttuiError as exc:
                refused.append(text)
                why = why or str(exc)
        if refused:  # nothing lost: back into the prompt, in the order entered
            screen.post_message(Unsent("\n".join(refused), why))
        screen.post_lane()
        screen.post_message(OutboxWritten())

    def written(self) -> bool:
        """``OutboxWritten`` arrived: ``True`` when nothing runs that would take what
        was written (the caller starts a drain)."""
        self.writing = False
        if self.texts:  # entered while the writer finished
            self._start()
            return False
        if self.screen.busy:
            self.late = True
            return False
        return True
