"""Compaction refuses while an approval waits, and only then: an approval asked again
after a restart and then answered no longer blocks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.core.compact import ApprovalFirst, compact_events
from mttui.core.handle import SessionHandle
from mttui.graph.events import RunEnded
from mttui.session.service import SessionService
from tests.support.handles import approve_waiting, offline


def test_an_answered_resumed_approval_no_longer_blocks_compaction(
    home: Path, project: Path
) -> None:
    service = SessionService(home, project)
    handle = SessionHandle.create(service, offline(), "waits")
    events = list(handle.run("!echo waiting"))
    assert isinstance(events[-1], RunEnded) and events[-1].status == "awaiting_approval"
    sid = handle.session_id
    handle.close()

    handle = SessionHandle.open(service, offline(), sid)
    try:
        assert handle.resume().pending is not None  # asked again after the restart
        with pytest.raises(ApprovalFirst):
            compact_events(handle, None)
        approve_waiting(handle)
        assert handle.waiting_approval() is None
        list(compact_events(handle, None))  # not refused any more
    finally:
        handle.close()
