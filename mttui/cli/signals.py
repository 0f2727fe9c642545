"""SIGINT/SIGTERM/SIGHUP and a closed output pipe stop a headless run cleanly (cli.md
exit codes; SIGHUP — a closed ssh session — like SIGTERM, exit 129)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

from .errors import Exit

_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


_CODES: dict[int, Exit] = {
    signal.SIGINT: Exit.SIGINT, signal.SIGTERM: Exit.SIGTERM, signal.SIGHUP: Exit.SIGHUP}


class Stoppable(Protocol):
    def stop(self) -> None: ...


class StopSignals:
    """SIGINT/SIGTERM/SIGHUP → a clean stop of the run; a second signal exits at once."""

    def __init__(self) -> None:
        self.code: int | None = None
        self.target: Stoppable | None = None
        self._old: dict[int, _Handler] = {}

    def install(self) -> None:
        try:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                self._old[sig] = signal.signal(sig, self._handle)
        except ValueError:  # not the main thread (embedded use): no handlers
            self._old.clear()

    def restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def __enter__(self) -> StopSignals:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        code = _CODES.get(signum, Exit.SIGTERM)
        if self.code is not None:
            os._exit(code)  # second signal: the user insists (resume will recover)
        self.code = code
        if self.target is not None:
            self.target.stop()

    def pipe_closed(self) -> None:
        """Our output was closed (``| head``): stop the run like a signal would (141)."""
        if self.code is None:
            self.code = Exit.SIGPIPE
        if self.target is not None:
            self.target.stop()


def run_in_worker(work: Callable[[], int]) -> int:
    """Run ``work`` in a thread while the main thread waits in short slices.

    Signal handlers only run in the main thread, and a SIGINT the kernel hands to a
    busy worker thread does not wake a main thread blocked on a lock: waiting in
    slices lets Ctrl+C and SIGTERM stop a run (or a long tool) at once.
    """
    result: list[int] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the main thread below
            failure.append(exc)

    thread = threading.Thread(target=target, name="mttui-run", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.1)
    if failure:
        raise failure[0]
    return result[0]
