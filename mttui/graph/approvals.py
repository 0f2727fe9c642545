"""Which approval requests the log holds, and the pending one as of the last run."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mttui.session.writer import SessionWriter

from .errors import RunnerError
from .events import ApprovalRequested, RunEnded


@dataclass
class ApprovalLedger:
    """The ``approval_request`` ids already in the log (each is recorded once), and the
    approval the thread waits for as of the last run (saves a state load per turn)."""

    written: set[str] = field(default_factory=set)
    pending: ApprovalRequested | None = None
    known: bool = False  # whether ``pending`` is up to date

    def record(
        self, writer: SessionWriter, request_id: str, run_id: str, tool_calls: list[dict[str, Any]]
    ) -> None:
        """Append ``approval_request`` unless the log already has this request id."""
        if request_id in self.written:
            return
        writer.append("approval_request", request_id=request_id, run_id=run_id,
                      tool_calls=tool_calls)  # fmt: skip
        self.written.add(request_id)

    def ended(self, end: RunEnded, request: ApprovalRequested | None) -> None:
        """Remember how the last run ended."""
        waiting = end.status == "awaiting_approval" and request is not None
        self.pending = replace(request, asked_again=True) if waiting and request else None
        self.known = True

    def forget(self) -> None:
        """The checkpoint changed: read the pending approval from it again."""
        self.known = False


DECISIONS = ("approve", "deny")


@dataclass(frozen=True)
class Decision:
    """An answer to a pending request, checked and completed (``approval_decision``)."""

    decisions: dict[str, str]  # every call of the request: approve | deny
    remember: list[str]  # tools of the request granted for the session
    fields: dict[str, Any]  # the record's fields


def decide(pending: ApprovalRequested, decisions: dict[str, str], reason: str | None,
           remember: list[str] | None) -> Decision:
    """Check ``decisions`` against the request; an unanswered call is denied."""
    known = {c["call_id"]: c["tool_name"] for c in pending.tool_calls}
    if set(decisions) - set(known) or set(decisions.values()) - set(DECISIONS):
        raise RunnerError("decisions must map the request's call ids to approve or deny")
    full = {cid: decisions.get(cid, "deny") for cid in known}
    kept = sorted({t for t in remember or [] if t in known.values()})
    fields: dict[str, Any] = {"request_id": pending.request_id, "decisions": full}
    if reason:
        fields["reason"] = reason
    if kept:
        fields["remember"] = kept
    return Decision(full, kept, fields)
