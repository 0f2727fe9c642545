"""Exit codes of cli.md and the one place that turns an error into a line and a code."""

from __future__ import annotations

import sys
from enum import IntEnum


class Exit(IntEnum):
    """The exit codes of cli.md."""

    OK = 0
    FAILED = 1
    USAGE = 2
    APPROVAL = 3
    LOCKED = 4
    NOT_FOUND = 5
    SIGHUP = 129
    SIGINT = 130
    SIGPIPE = 141
    SIGTERM = 143


def report_error(exc: BaseException) -> int:
    """One line on stderr and the exit code of cli.md (traceback with MTTUI_DEBUG=1)."""
    from mttui.config import debug_enabled
    from mttui.session.disk import DISK_FULL_TEXT, disk_full
    from mttui.session.errors import RefTooShort, SessionLocked, SessionNotFound

    if debug_enabled():
        import traceback

        traceback.print_exception(exc)
    message = str(exc) or exc.__class__.__name__
    if disk_full(exc):
        message = DISK_FULL_TEXT
    from .output import visible

    print(f"mttui: {visible(message.splitlines()[0])}", file=sys.stderr)
    if isinstance(exc, SessionLocked):
        return Exit.LOCKED
    if isinstance(exc, RefTooShort):
        return Exit.USAGE
    if isinstance(exc, SessionNotFound):
        return Exit.NOT_FOUND
    return Exit.FAILED
