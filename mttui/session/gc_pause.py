"""No garbage collections while a process starts.

Imports allocate hundreds of thousands of objects and free few: the collector runs
again and again over them for nothing (about a tenth of the TUI's start). The
``mttui`` command pauses it first thing; it resumes once the command's modules are
imported, or, for the TUI, once the first screen is drawn. What exists by then is
frozen (``gc.freeze``): the collector never walks it again, so the first collection
after the pause costs no more than any later one.
"""

from __future__ import annotations

import gc


def pause() -> None:
    """No collections from now on (until :func:`resume`)."""
    gc.disable()


def resume() -> None:
    """Collections again, over what is made from now on (a no-op when not paused)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
