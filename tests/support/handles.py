"""Driving a session handle with the offline model: settings, answering its approval."""

from __future__ import annotations

from mttui.config import Settings
from mttui.core.handle import ApprovalAnswer, SessionHandle


def offline() -> Settings:
    """The offline model, asking before side effects."""
    return Settings(provider="offline", model="offline", approval="ask")


def approve_waiting(handle: SessionHandle, *, grant: tuple[str, ...] = ()) -> None:
    """Approve every call of the handle's waiting request (granting ``grant`` for the
    session) and run the rest of the turn."""
    request = handle.waiting_approval()
    assert request is not None
    list(handle.answer(request, ApprovalAnswer(
        {c["call_id"]: "approve" for c in request.tool_calls}, None, grant)))
