"""What a resume will do, as the chat shows it when a session opens (read-only).

Opening a session writes nothing: its resume warnings and an approval it waits
for are read from the log and the checkpoint here; the resume is applied when
the user first acts (sends, answers, resumes the queue).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mttui.graph.events import ApprovalRequested
from mttui.session.service import SessionService

from .resume_check import check


@dataclass(frozen=True)
class ResumePreview:
    """``warnings``: JSON warnings (code, message…) in their documented order;
    ``approval``: the approval that will be asked again (``None``: none, or one
    already decided, which is applied when the user continues); ``decided``: there
    is such a decided approval or a run that goes on."""

    mode: str
    warnings: list[dict[str, object]] = field(default_factory=list)
    approval: ApprovalRequested | None = None
    decided: bool = False

    @property
    def empty(self) -> bool:
        return not self.warnings and self.approval is None and not self.decided


def preview_resume(service: SessionService, session_id: str) -> ResumePreview:
    """The read-only resume plan of ``session_id`` as the chat shows it."""
    plan, found = check(service, session_id)
    if not found:
        return ResumePreview("refused")
    warnings = [w.as_json() for w in plan.warnings]
    decided = bool(plan.decided_approval or plan.continued_calls)
    asked = plan.pending_approval
    approval = None
    if asked and not plan.decided_approval:
        approval = ApprovalRequested(str(asked.get("request_id", "")), "",
                                     [dict(c) for c in asked.get("tool_calls", [])],
                                     asked_again=True)
    return ResumePreview(plan.mode, warnings, approval, decided)
