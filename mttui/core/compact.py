"""Compressing a session's history on request (``mttui compact``, ``/compact``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mttui.graph.events import Compressed, Notice, RunEvent
from mttui.session.errors import MttuiError
from mttui.session.service import SessionService

from .handle import SessionHandle, langgraph_runner

if TYPE_CHECKING:
    from mttui.config import Settings

    from .handle import RunnerFactory


@dataclass(frozen=True)
class CompactResult:
    session_id: str
    compressed: Compressed | None
    reason: str = ""  # why nothing was compressed


class ApprovalFirst(MttuiError):
    """Compaction waits for the pending approval to be answered."""


def compact_events(handle: SessionHandle, instructions: str | None) -> Iterator[RunEvent]:
    """Resume, then compress; refuses (one line) while an approval waits."""
    handle.resume()
    # The runner's state, not the resume's: an approval asked again after a restart and
    # answered since no longer waits.
    if handle.waiting_approval() is not None:
        raise ApprovalFirst("an approval is pending; answer it first with: "
                            f"mttui exec --resume {handle.session_id} --approve all|none")
    return handle.compact(instructions)


def compact(service: SessionService, settings: Settings, ref: str,
            instructions: str | None = None,
            factory: RunnerFactory = langgraph_runner) -> CompactResult:
    """Open ``ref``, resume it, compress it, close it."""
    handle = SessionHandle.open(service, settings, ref, factory)
    try:
        done: Compressed | None = None
        reason = "nothing to compress"
        for event in compact_events(handle, instructions):
            if isinstance(event, Compressed):
                done = event
            elif isinstance(event, Notice):
                reason = event.text
        return CompactResult(handle.session_id, done, "" if done else reason)
    finally:
        handle.close()
