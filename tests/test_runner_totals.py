"""A runner opening a session takes its totals (session_end stats, session grants,
approval requests written) from the index, not from a read of the whole log; the
index's totals equal what a read of the log finds, and a rebuild reproduces them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mttui.graph.runner as runner_module
from mttui.core.handle import SessionHandle
from mttui.graph.journal import LogFacts, scan_log
from mttui.graph.runner import Runner
from mttui.session.service import SessionService
from tests.support.handles import approve_waiting, offline


def _busy_session(service: SessionService) -> str:
    handle = SessionHandle.create(service, offline(), "totals")
    list(handle.run("!echo one"))
    approve_waiting(handle, grant=("shell",))
    list(handle.run("!echo two"))  # granted: runs unasked
    list(handle.run("/write notes.txt hello"))
    approve_waiting(handle, grant=("write_file",))
    assert handle.revoke_grant("write_file")
    list(handle.run("hello there"))
    sid = handle.session_id
    handle.close()
    return sid


def _same(a: LogFacts, b: LogFacts) -> None:
    assert a.stats.as_json() == b.stats.as_json()
    assert a.remembered == b.remembered
    assert set(a.requests) == set(b.requests)


def test_the_index_knows_what_a_read_of_the_log_finds(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    sid = _busy_session(service)
    path = Path(service.get(sid).path)
    read = scan_log(path)
    assert read.stats.turns == 4 and read.stats.tool_calls == 3 and read.remembered == {"shell"}
    with service.open_session(path) as writer:
        totals = writer.totals()
        assert totals is not None
        _same(LogFacts.from_totals(totals), read)

        def no_scan(_: Any) -> LogFacts:
            raise AssertionError("the runner read the whole log")

        monkeypatch.setattr(runner_module, "scan_log", no_scan)
        runner = Runner.for_service(service, writer, offline())
        assert runner.remembered == {"shell"} and runner.journal.stats.turns == 4
    # a rebuild of the index gives the same totals
    service.reindex()
    with service.open_session(path) as writer:
        again = writer.totals()
        assert again is not None and again == totals


def test_an_index_behind_the_file_is_not_trusted(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid = _busy_session(service)
    path = Path(service.get(sid).path)
    with service.open_session(path) as writer:
        with open(path, "a", encoding="utf-8") as fh:  # another writer's line, not indexed
            fh.write('{"type":"run_start","seq":999,"run_id":"r-x"}\n')
        path.stat()
        # the index catches up first; what it reports includes the new line
        totals = writer.totals()
        assert totals is None or totals.turns == scan_log(path).stats.turns


def test_the_lane_from_the_index_is_the_lane_of_the_log(home: Path, project: Path) -> None:
    from mttui.session.pending import read_lane
    from tests.support.logs import new_session

    def msg(mid: str, text: str) -> dict[str, Any]:
        return {"id": mid, "role": "user", "content": text, "status": "sent"}

    service = SessionService(home, project)
    writer = new_session(service, [
        ("pending_add", {"item_id": "a", "mode": "queue", "text": "A"}),
        ("pending_add", {"item_id": "b", "mode": "queue", "text": "B"}),
        ("pending_add", {"item_id": "c", "mode": "queue", "text": "C"}),
        ("pending_take", {"item_id": "a", "message": msg("m1", "A")}),
        ("pending_fail", {"item_id": "c", "error": "no model"}),
        ("pending_move", {"item_id": "b", "position": 1}),
        ("pending_steer", {"item_id": "s1", "text": "x", "message": msg("m2", "x")}),
        ("pending_steer", {"item_id": "s2", "text": "y", "message": msg("m3", "y")}),
        ("pending_read", {"item_ids": ["s1"], "message_ids": ["m2"]}),
        ("pending_remove", {"item_id": "b"}),
    ], title="lane")  # fmt: skip
    path = writer.path
    writer.close()
    with service.open_session(path) as again:
        indexed = again.lane_source()
        assert indexed is not None
        logged = read_lane(path)
        assert indexed.view() == logged.view()
        assert {i: (it.mode, it.text, it.state, it.message_id, it.error)
                for i, it in indexed.items.items() if it.state not in ("removed",)} == {
            i: (it.mode, it.text, it.state, it.message_id, it.error)
            for i, it in logged.items.items() if it.state not in ("removed",)}
