"""The terminal driver: Textual's own, with pasted text kept a paste (``paste_guard``)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from textual.driver import Driver
from textual.drivers import linux_driver
from textual.message import Message

from .paste_guard import PasteGuard


class GuardedParser(linux_driver.XTermParser):
    """Textual's input parser behind a :class:`PasteGuard`."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self.guard = PasteGuard()

    def feed(self, data: str) -> Iterable[Message]:
        if data:
            kept = self.guard.filter(data)  # may be empty: all of it held back
            return super().feed(kept) if kept else ()
        held = self.guard.flush()  # the end of input: what was held back, then the end
        return chain(super().feed(held) if held else (), super().feed(""))


class GuardedLinuxDriver(linux_driver.LinuxDriver):
    """Textual's Linux/macOS driver reading input through :class:`GuardedParser`."""

    def run_input_thread(self) -> None:
        # The driver builds its parser from this module-level name when its input thread
        # starts (Textual has no hook for it); the terminal test of pasting catches a
        # Textual that stops doing so.
        linux_driver.XTermParser = GuardedParser  # type: ignore[misc]
        super().run_input_thread()


def driver_for(default: type[Driver]) -> type[Driver]:
    """The driver to use where Textual would use ``default``."""
    return GuardedLinuxDriver if default is linux_driver.LinuxDriver else default
