"""``resume-check``: what a resume would do, read-only (nothing is written, not even
the index). The checkpoint is consulted only when the session's thread exists, and
LangGraph is imported only when the light reader does not recognise it."""

from __future__ import annotations

from mttui.session.resume.check import ResumePlan, check_log, mark_locked
from mttui.session.service import SessionService


def check(service: SessionService, ref: str) -> tuple[ResumePlan, bool]:
    """``(plan, found)``: the plan of session ``ref``; ``found`` is ``False`` for an
    unknown session (the plan then carries the ``session_not_found`` refusal)."""
    plan, facts = check_log(service.layout, service.project_hash, ref, lock=False)
    if facts is None:
        return plan, False
    if plan.mode == "execution":
        from mttui.graph.resume.plan import refine_from_checkpoint

        plan = refine_from_checkpoint(plan, facts, service.layout)
    mark_locked(plan, facts.path)
    return plan, True
