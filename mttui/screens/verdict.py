"""The resume verdict shown in the browser's preview: read-only, no LangGraph.

Uses the log-only resume plan (``mttui.session.resume.check``). Very long
sessions are not read in full for a preview; their badges speak instead.
"""

from __future__ import annotations

from typing import Any

from mttui.messages import Verdict
from mttui.session.models import SessionInfo
from mttui.widgets.badges import describe

FULL_CHECK_LIMIT = 20_000  # messages; beyond this the preview shows the badges only


def quick_verdict(service: Any, info: SessionInfo) -> Verdict:
    """The verdict of ``mttui resume-check`` as far as the log tells (never writes)."""
    if info.message_count > FULL_CHECK_LIMIT:
        return _from_badges(info, "long session: full check when opened "
                                  "(or run mttui resume-check)")
    try:
        from mttui.session.resume.check import check_session
    except ImportError:  # pragma: no cover - the planner is part of the package
        return _from_badges(info, "")
    try:
        plan = check_session(service, info.id)
    except Exception as exc:  # a broken log must not break the browser
        return Verdict("unchecked", note=f"check failed: {exc}")
    note = f"open for writing in process {plan.locked_by}" if plan.locked_by else ""
    return Verdict(plan.mode, [w.as_json() for w in plan.warnings], plan.refusal, note)


def _from_badges(info: SessionInfo, note: str) -> Verdict:
    warnings = [{"code": badge, "message": words} for badge, words in describe(info.status)]
    return Verdict("unchecked", warnings, None, note)
