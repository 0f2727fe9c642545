"""Domain rules of the session layer the UI and the CLI both show: markers, last usage,
relative times and the preview's resume verdict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import mttui.session.markers as markers
from mttui.session.models import SessionInfo, SessionStatus
from mttui.session.resume.verdict import FULL_CHECK_LIMIT, PreviewVerdict, preview_verdict
from mttui.session.service import SessionService
from mttui.session.times import relative_time

NOW = datetime(2026, 11, 29, 18, 0, 0, tzinfo=UTC)


@pytest.fixture
def service(home: Path, project: Path) -> SessionService:
    return SessionService(home, project)


def message(role: str, n: int, **extra: object) -> tuple[str, dict[str, object]]:
    return "transcript_message", {"message": {"id": f"msg-{n}", "role": role,
                                              "content": f"m{n}", "status": "sent", **extra}}


def write(service: SessionService, records: list[tuple[str, dict[str, object]]]) -> str:
    with service.create_session(provider="offline", model="offline") as writer:
        writer.append_many(records)
        return writer.session_id


def test_markers_follow_the_right_message(service: SessionService) -> None:
    records = [message("user", n) for n in range(1, 6)]
    records.insert(3, ("compression", {"summary": "s", "removed_count": 2}))
    records.append(("session_resumed", {"mode": "execution", "warnings": []}))  # clean: none
    records.append(("session_resumed", {"mode": "execution", "warnings": ["tool_interrupted"]}))
    sid = write(service, records)
    with open(service.get(sid).path, "ab") as fh:  # a torn tail is no marker
        fh.write(b'{"type":"compression","seq":99,"summ')
    found = service.markers(sid)
    assert [(m.kind, m.anchor) for m in found] == [("compression", 3), ("resumed", 5)]
    assert found[0].data["summary"] == "s"
    assert found[1].data["warnings"] == ["tool_interrupted"]
    assert found == markers.scan_markers(service.get(sid).path)


def test_markers_scan_is_chunk_safe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [b'{"type":"session_start","seq":1}']
    for i in range(2, 30):
        kind = "compression" if i % 10 == 0 else "transcript_message"
        lines.append(b'{"type":"%s","seq":%d}' % (kind.encode(), i))
    lines.append(b'{"type":"pending_take","seq":30}')  # carries a message too
    lines.append(b'{"type":"compression","seq":31}')
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    whole = [(m.anchor, m.record_seq) for m in markers.scan_markers(path)]
    assert whole == [(8, 10), (17, 20), (27, 31)]
    for chunk in (7, 24, 25, 33):  # lines and patterns cross chunk boundaries
        monkeypatch.setattr(markers, "CHUNK", chunk)
        assert [(m.anchor, m.record_seq) for m in markers.scan_markers(path)] == whole
    assert markers.scan_markers(tmp_path / "missing.jsonl") == []


def test_last_usage(service: SessionService) -> None:
    sid = write(service, [message("user", 1)])
    assert service.last_usage(sid) is None
    sid = write(service, [
        message("user", 1),
        message("assistant", 2, usage={"input_tokens": 100, "output_tokens": 20}),
        message("user", 3),
        message("assistant", 4, usage={"input_tokens": 300, "output_tokens": 5,
                                       "estimated": True}),
        message("assistant", 5),
    ])  # fmt: skip
    assert service.last_usage(sid) == (305, True)


def test_relative_time() -> None:
    def ago(**kw: float) -> str:
        return (NOW - timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    assert relative_time(ago(seconds=10), NOW) == "just now"
    assert relative_time(ago(seconds=-30), NOW) == "just now"  # a clock a little ahead
    assert relative_time(ago(minutes=5), NOW) == "5m ago"
    assert relative_time(ago(hours=3), NOW) == "3h ago"
    assert relative_time(ago(days=2), NOW) == "2d ago"
    assert relative_time(ago(days=40), NOW) == "Oct 20"
    assert relative_time(ago(days=400), NOW) == "2025-10-25"
    assert relative_time("2026-11-29T17:00:00", NOW) == "1h ago"  # no zone: UTC
    assert relative_time("garbage", NOW) == "—"
    assert relative_time(None, NOW) == "—"
    assert relative_time("", NOW) == "—"


def test_preview_verdict(service: SessionService) -> None:
    sid = write(service, [message("user", 1), message("assistant", 2)])
    verdict = preview_verdict(service, service.get(sid))
    assert isinstance(verdict, PreviewVerdict)
    assert verdict.mode in ("execution", "transcript") and verdict.note == ""
    gone = SessionInfo(id="0123456789ab", title=None, project="", project_hash="x",
                       path=Path("/nonexistent"), created_at="", updated_at="",
                       message_count=1, provider=None, model=None, thread_id=None)  # fmt: skip
    failed = preview_verdict(service, gone)
    assert failed.mode == "unchecked" and failed.note.startswith("check failed: ")


def test_preview_verdict_of_a_long_session_uses_the_badges(service: SessionService) -> None:
    info = SessionInfo(id="0123456789ab", title=None, project="", project_hash="x",
                       path=Path("/nonexistent"), created_at="", updated_at="",
                       message_count=FULL_CHECK_LIMIT + 1, provider=None, model=None,
                       thread_id=None, status=SessionStatus(queued=2, corrupt_lines=1))  # fmt: skip
    assert preview_verdict(service, info) == PreviewVerdict(
        "unchecked",
        [{"code": "⧗", "message": "2 queued input(s)"},
         {"code": "✗", "message": "1 corrupt line(s) skipped"}],
        None,
        "long session: full check when opened (or run mttui resume-check)",
    )  # fmt: skip
