"""Which approval requests the log holds, and the pending one as of the last run."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mttui.session.writer import SessionWriter

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
