"""No garbage collections while a process starts, and no full ones while a run goes.

Imports allocate hundreds of thousands of objects and free few: the collector runs
again and again over them for nothing (about a tenth of the TUI's start). The
``mttui`` command pauses it first thing; it resumes once the command's modules are
imported, or, for the TUI, once the first screen is drawn. What exists by then is
frozen (``gc.freeze``): the collector never walks it again, so the first collection
after the pause costs no more than any later one.

A run then makes a heap of its own (a long chat's model view is tens of thousands
of message objects), and a full collection walks all of it: 0.3–0.4 s here for a
10 000-message chat, several times during one fast reply, each a freeze of the
screen while the user types. While a run goes (``no_full_collections``) only the
young generations are collected, which is where a stream's garbage is; the full
collection comes after it, when the reply stands still, or, in a run that goes on
for minutes, once a minute when a tool step has ended (``quiet_point``), so that
what such a run leaves behind is still reclaimed.

The TUI imports the agent runtime (LangGraph, the model client: some 200 000
objects) in a thread after its first screen; those stay for the process's life and
are frozen too (``keep``), else every full collection walks them again (0.15–0.2 s
here, a freeze of the screen as a fast reply ends).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# The process's collector is one for all threads, and so is this: how many runs go,
# and the full-collection threshold to restore when the last one ends.
_lock = threading.Lock()
_held: dict[str, float] = {"runs": 0, "full": 10, "since": 0.0}
_NEVER = 1 << 30  # full collections after this many young ones: none in practice
OVERDUE = 60.0  # seconds without a full collection after which a quiet point makes one


def pause() -> None:
    """No collections from now on (until :func:`resume`)."""
    gc.disable()


def resume() -> None:
    """Collections again, over what is made from now on (a no-op when not paused)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def keep() -> None:
    """What exists now stays for the process's life (modules just imported): the
    collector never walks it again."""
    gc.freeze()


@contextmanager
def no_full_collections() -> Iterator[None]:
    """No full collections inside (runs may overlap: the last one out restores them)."""
    with _lock:
        _held["runs"] += 1
        if _held["runs"] == 1:
            young, middle, _held["full"] = gc.get_threshold()
            gc.set_threshold(young, middle, _NEVER)
            _held["since"] = time.monotonic()
    try:
        yield
    finally:
        with _lock:
            _held["runs"] -= 1
            if _held["runs"] == 0:
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, int(_held["full"]))


def quiet_point() -> None:
    """Nothing streams now (a tool step has ended): if full collections have been held
    for longer than ``OVERDUE``, one now."""
    with _lock:
        due = _held["runs"] > 0 and time.monotonic() - _held["since"] > OVERDUE
        if due:
            _held["since"] = time.monotonic()
    if due:
        gc.collect()
