"""The terminal driver: Textual's own, with pasted text kept a paste (``paste_guard``) and
Enter typed before the app took the terminal read as Enter."""

from __future__ import annotations

import fcntl
import functools
import os
import sys
import termios
from collections.abc import Iterable
from itertools import chain

from textual.driver import Driver
from textual.drivers import linux_driver
from textual.message import Message

from .paste_guard import PasteGuard


class GuardedParser(linux_driver.XTermParser):
    """Textual's input parser behind a :class:`PasteGuard`.

    ``early``: how many bytes were typed before the terminal was put in raw mode. The
    terminal turned an Enter among them into a line feed (its ICRNL), which reads as
    ctrl+j; within those bytes a line feed is taken as the Enter it was (a ctrl+j typed
    at that moment is the same byte, and much rarer).
    """

    def __init__(self, debug: bool = False, *, early: int = 0) -> None:
        super().__init__(debug)
        self.guard = PasteGuard()
        self.early = early

    def feed(self, data: str) -> Iterable[Message]:
        if data:
            if self.early > 0:
                data = self._enter_typed_early(data)
            kept = self.guard.filter(data)  # may be empty: all of it held back
            return super().feed(kept) if kept else ()
        held = self.guard.flush()  # the end of input: what was held back, then the end
        return chain(super().feed(held) if held else (), super().feed(""))

    def _enter_typed_early(self, data: str) -> str:
        out: list[str] = []
        for n, char in enumerate(data):
            if self.early <= 0:
                return "".join(out) + data[n:]
            self.early -= len(char.encode("utf-8", "surrogatepass"))
            out.append("\r" if char == "\n" else char)
        return "".join(out)


def typed_ahead(fileno: int) -> int:
    """Bytes waiting to be read on the terminal ``fileno`` (0 when it can't tell)."""
    if not os.isatty(fileno):
        return 0
    try:
        buf = fcntl.ioctl(fileno, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return 0
    return int.from_bytes(buf, sys.byteorder)  # a C int, in the machine's byte order


class GuardedLinuxDriver(linux_driver.LinuxDriver):
    """Textual's Linux/macOS driver reading input through :class:`GuardedParser`."""

    def run_input_thread(self) -> None:
        # The driver builds its parser from this module-level name when its input thread
        # starts (Textual has no hook for it); the terminal tests of pasting and of keys
        # typed ahead catch a Textual that stops doing so. The thread starts right after
        # raw mode is set: what is waiting now was typed before it.
        linux_driver.XTermParser = functools.partial(  # type: ignore[misc,assignment]
            GuardedParser, early=typed_ahead(self.fileno))
        super().run_input_thread()


def driver_for(default: type[Driver]) -> type[Driver]:
    """The driver to use where Textual would use ``default``."""
    return GuardedLinuxDriver if default is linux_driver.LinuxDriver else default
