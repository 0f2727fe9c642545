"""What the runner refuses to do, as one-line errors for the user."""

from __future__ import annotations

from mttui.session.errors import MttuiError


class RunnerError(MttuiError):
    """The runner cannot do what was asked (one-line message)."""


class ApprovalPendingError(RunnerError):
    """A new input while an approval waits: answer it first (the input must be queued)."""
