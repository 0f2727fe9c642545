"""The resume verdict of a session as the browser's preview shows it: read-only.

The log-only plan (``check``); very long sessions are not read in full for a
preview, their status badges speak instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..fork_state import incomplete_text
from ..models import SessionInfo
from .check import ProjectScope, check_session

FULL_CHECK_LIMIT = 20_000  # messages; beyond this the preview shows the badges only


@dataclass
class PreviewVerdict:
    """What ``mttui resume-check`` would say, as far as the log tells."""

    mode: str  # execution | transcript | refused | unchecked
    warnings: list[dict[str, object]] = field(default_factory=list)
    refusal: dict[str, str] | None = None
    note: str = ""


def preview_verdict(scope: ProjectScope, info: SessionInfo) -> PreviewVerdict:
    """The verdict of ``info`` (never writes; a broken log gives ``unchecked``)."""
    if info.fork_incomplete:  # refused for writing (core.handle): finished or deleted
        return PreviewVerdict("refused", refusal={
            "code": "fork_incomplete", "message": incomplete_text(info.id, named=False)})
    if info.message_count > FULL_CHECK_LIMIT:
        warnings: list[dict[str, object]] = [
            {"code": badge, "message": words} for badge, words in info.status.describe()
        ]
        return PreviewVerdict(
            "unchecked", warnings, None,
            "long session: full check when opened (or run mttui resume-check)",
        )  # fmt: skip
    try:
        plan = check_session(scope, info.id)
    except Exception as exc:  # a broken log must not break the browser
        return PreviewVerdict("unchecked", note=f"check failed: {exc}")
    note = f"open for writing in process {plan.locked_by}" if plan.locked_by else ""
    return PreviewVerdict(plan.mode, [w.as_json() for w in plan.warnings], plan.refusal, note)
