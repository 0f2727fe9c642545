"""Session grants (tools approved for the rest of the session): listed and revoked
through the session handle; a revocation is durable (``grant_revoked``), a restored
grant is named in the resume's warnings."""

from __future__ import annotations

from pathlib import Path

from mttui.core.handle import SessionHandle
from mttui.graph.events import RunEnded
from mttui.graph.journal import scan_log
from mttui.graph.runner import Runner
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.handles import approve_waiting, offline


def granted_session(service: SessionService) -> str:
    """A session whose ``shell`` was approved for the session (then closed cleanly)."""
    handle = SessionHandle.create(service, offline(), "grants")
    list(handle.run("!echo one"))
    approve_waiting(handle, grant=("shell",))
    assert handle.grants() == ["shell"]
    sid = handle.session_id
    handle.close()
    return sid


def open_handle(service: SessionService, sid: str) -> SessionHandle:
    return SessionHandle.open(service, offline(), sid)


def test_a_grant_is_restored_and_the_resume_names_it(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid = granted_session(service)
    handle = open_handle(service, sid)
    try:
        assert handle.grants() == ["shell"]
        warnings = handle.resume().warnings
        restored = [w for w in warnings if w["code"] == "grants_restored"]
        assert len(restored) == 1 and "shell" in str(restored[0]["message"])
        events = list(handle.run("!echo two"))  # runs without asking
        assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
    finally:
        handle.close()
    resumed = [r for r in service.records(sid)[0] if r["type"] == "session_resumed"]
    assert "grants_restored" in resumed[-1]["warnings"]


def test_a_revoked_grant_asks_again_also_after_a_restart(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid = granted_session(service)
    handle = open_handle(service, sid)
    try:
        assert handle.revoke_grant("shell") is True
        assert handle.revoke_grant("shell") is False  # nothing to revoke: nothing written
        assert handle.revoke_grant("write_file") is False
        assert handle.grants() == []
        assert not [w for w in handle.resume().warnings if w["code"] == "grants_restored"]
        events = list(handle.run("!echo asks"))
        assert isinstance(events[-1], RunEnded) and events[-1].status == "awaiting_approval"
    finally:
        handle.close()
    records = service.records(sid)[0]
    assert [r["tools"] for r in records if r["type"] == "grant_revoked"] == [["shell"]]
    path = Path(service.get(sid).path)
    assert scan_log(path).remembered == set()
    assert fold(records).remembered_tools == set()
    writer = service.open_session(path)
    try:  # a new runner on the same log: no grant
        assert Runner.for_service(service, writer, offline()).remembered == set()
    finally:
        writer.close()
    report = service.doctor()  # the new record type is a valid record
    assert [p for p in report.problems if p["session_id"] == sid] == []
