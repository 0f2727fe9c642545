"""Errors of the session layer; each maps to one CLI exit code."""

from __future__ import annotations

from .lock import SessionLocked

__all__ = ["MttuiError", "SessionLocked", "SessionNotFound", "SessionEmpty", "RefTooShort",
           "IndexTooNew"]


class MttuiError(Exception):
    """A failure with a one-line message for the user (exit code 1)."""


class SessionNotFound(MttuiError):
    """No session matches the reference, or a prefix matches several (exit code 5)."""


class RefTooShort(SessionNotFound):
    """A session reference too short to be a prefix: a usage error (exit code 2)."""


class SessionEmpty(MttuiError):
    """The session has no readable ``session_start``."""


class IndexTooNew(MttuiError):
    """The index was written by a newer mttui (its schema is unknown here): only a
    rebuild from the logs may replace it."""
