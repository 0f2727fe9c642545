"""Opening a session for writing reads the runner's totals and the pending lane from the
index in one visit; an append makes the next read visit the index again."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.session.service import SessionService
from tests.support import logs


def test_totals_and_lane_in_one_visit(service: SessionService,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    sid = logs.new_session(service, [logs.message("a", "user", "hi")]).session_id
    visits: list[Path] = []
    index_file = service._index_file  # noqa: SLF001 - counting the service's own visits

    def counted(path: Path) -> None:
        visits.append(path)
        index_file(path)

    monkeypatch.setattr(service, "_index_file", counted)
    with service.open_writer(sid) as w:
        visits.clear()
        totals, lane = w.totals(), w.lane()
        assert totals is not None and lane.queue() == []
        assert len(visits) == 1
        w.append("pending_add", item_id="p1", mode="queue", text="later")
        visits.clear()
        assert [i.text for i in w.lane().queue()] == ["later"]  # read again, fresh
        assert len(visits) == 1
        assert w.lane() is not w.lane()  # each caller gets its own lane
