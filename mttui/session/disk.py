"""Telling a full disk from other failures, for a message that says so."""

from __future__ import annotations

import errno
import sqlite3

_FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a full disk or an exhausted quota."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in _FULL:
            return True
        if isinstance(seen, sqlite3.OperationalError) and "disk is full" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


DISK_FULL_TEXT = "the disk is full (no space left on device): free some space and try again"
