"""doctor: per-log problems, index/file mismatches, and repair by rebuilding."""

from __future__ import annotations

import os
from pathlib import Path

from mttui.session.service import SessionService
from tests.support.logs import message, new_session


def _session(svc: SessionService, text: str = "hello") -> tuple[str, Path]:
    w = new_session(svc, [message("a", "user", text)])
    return w.session_id, w.path


def _codes(report) -> set[tuple[str | None, str]]:  # type: ignore[no-untyped-def]
    return {(p["session_id"], p["code"]) for p in report.problems}


def test_a_clean_home_has_no_problems(svc: SessionService) -> None:
    _session(svc)
    report = svc.doctor()
    assert report.sessions_checked == 1 and report.problems == [] and report.repaired == []
    assert set(report.as_json()) == {"sessions_checked", "problems", "repaired"}


def test_log_problems_are_reported(svc: SessionService) -> None:
    sid, path = _session(svc)
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
        fh.write(b'{"type": "run_start", "seq": 9, "run_id": "r"}\n')
    os.chmod(path, 0o644)
    codes = _codes(svc.doctor())
    assert {(sid, "corrupt_lines"), (sid, "seq_gap"), (sid, "permissions")} <= codes


def test_index_and_files_disagree_then_repair(svc: SessionService, home: Path) -> None:
    gone, gone_path = _session(svc)
    svc.list_sessions()
    gone_path.unlink()  # behind the index's back
    other = SessionService(home, svc.project)
    new, _ = _session(other)  # indexed by the other service
    svc.close()
    os.remove(svc.layout.index_path)  # and now nobody has indexed it
    stale = SessionService(home, svc.project)
    stale._db()
    codes = _codes(stale.doctor())
    assert (new, "not_indexed") in codes
    report = stale.doctor(repair=True)
    assert any(r["code"] == "reindexed" for r in report.repaired)
    assert stale.doctor().problems == []
    assert [s.id for s in stale.list_sessions().sessions] == [new]
    assert gone not in {s.id for s in stale.list_sessions().sessions}


def test_missing_file_is_reported(svc: SessionService) -> None:
    sid, path = _session(svc)
    svc.list_sessions()
    path.unlink()
    assert (sid, "missing_file") in _codes(svc.doctor())
    fixed = svc.doctor(repair=True)
    assert fixed.repaired and svc.doctor().problems == []
