"""What a session's pending inputs look like from outside the process that writes it.

pending.md "after a restart": queue items that wait while nobody has the session
open are *held* until the user resumes the queue, and Steers a previous process
accepted but never delivered are *stale* (they become errors at the next write,
never replayed). This is the one place that rule lives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mttui.session.index.pending_rows import lane_of
from mttui.session.lock import holder_pid
from mttui.session.paths import Layout
from mttui.session.pending import Lane


def restart_sets(lane: Lane) -> tuple[set[str], set[str]]:
    """``(held, stale)`` item ids of a lane no process is running right now."""
    return {i.id for i in lane.queue()}, {i.id for i in lane.unread()}


@dataclass(frozen=True)
class LaneView:
    """The rows ``queue list --json`` shows, and whether the queue is held."""

    rows: list[dict[str, object]]
    held: bool


def lane_view(layout: Layout, session_id: str, path: Path) -> LaneView:
    """The lane of a session as read from the index (read-only, takes no lock)."""
    lane = lane_of(layout, session_id, path)
    if holder_pid(path) is not None:  # another process runs it: nothing is held
        return LaneView(lane.view(), False)
    held, stale = restart_sets(lane)
    return LaneView(lane.view(held, stale), bool(held))
