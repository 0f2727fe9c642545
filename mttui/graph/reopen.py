"""Reopening a session for writing: the resume planner, then its apply step.

``reopen(runner)`` is what ``mttui exec --resume/--session/--continue`` and the
TUI call before continuing a session: it plans read-only (resume.md), refuses
with :class:`~mttui.graph.resume.apply.ResumeRefused` when the plan does, and
otherwise applies it (closing interrupted and dangling tool calls, rebuilding a
transcript-only session into a fresh thread, ``session_resumed``). It runs no
model and no tool; an approval that was pending stays pending and is asked
again with the same ``request_id`` (``runner.pending_approval()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .resume.apply import ResumeOutcome, ResumeRefused, resume_session

if TYPE_CHECKING:
    from .runner import Runner

__all__ = ["ResumeOutcome", "ResumeRefused", "reopen", "resume_session"]


def reopen(runner: Runner) -> tuple[str, list[dict[str, Any]]]:
    """``(mode, warnings)`` of the applied resume; see :func:`resume_session` for more."""
    outcome = resume_session(runner)
    return outcome.mode, outcome.warnings
