"""Keyset pages: history by msg_seq and the session list by (updated_at, id)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from mttui.session.errors import MttuiError
from mttui.session.service import SessionService
from tests.support.logs import message, new_session


def _session(svc: SessionService, n: int) -> str:
    return new_session(svc, [message(f"m{i}", "user", f"t{i}") for i in range(1, n + 1)]).session_id


def _seqs(page) -> list[int]:  # type: ignore[no-untyped-def]
    return [m.seq for m in page.messages]


def test_newest_then_older_pages_to_the_first(svc: SessionService) -> None:
    sid = _session(svc, 120)
    page = svc.history(sid, limit=50)
    assert _seqs(page) == list(range(71, 121)) and page.has_more and page.next_before == 71
    assert not page.has_newer
    page = svc.history(sid, limit=50, before=page.next_before)
    assert _seqs(page) == list(range(21, 71)) and page.next_before == 21
    page = svc.history(sid, limit=50, before=page.next_before)
    assert _seqs(page) == list(range(1, 21))
    assert page.has_more is False and page.next_before is None
    assert page.messages[0].content == "t1" and page.messages[0].id == "m1"


def test_exact_boundaries(svc: SessionService) -> None:
    sid = _session(svc, 50)
    page = svc.history(sid, limit=50)
    assert _seqs(page) == list(range(1, 51)) and not page.has_more
    page = svc.history(sid, limit=49)
    assert page.has_more and page.next_before == 2
    assert _seqs(svc.history(sid, limit=10, before=1)) == []


def test_around_centres_and_fills_near_the_ends(svc: SessionService) -> None:
    sid = _session(svc, 100)
    page = svc.history(sid, limit=10, around=60)
    assert _seqs(page) == list(range(55, 65)) and page.has_more and page.has_newer
    page = svc.history(sid, limit=10, around=2)
    assert _seqs(page) == list(range(1, 11)) and not page.has_more and page.has_newer
    page = svc.history(sid, limit=10, around=99)
    assert _seqs(page) == list(range(91, 101)) and page.has_more and not page.has_newer
    page = svc.history(sid, limit=10, around=100)
    assert 100 in _seqs(page) and len(page.messages) == 10


def test_after_pages_forward(svc: SessionService) -> None:
    sid = _session(svc, 25)
    page = svc.history(sid, limit=10, after=10)
    assert _seqs(page) == list(range(11, 21)) and page.has_newer and page.has_more
    page = svc.history(sid, limit=10, after=20)
    assert _seqs(page) == list(range(21, 26)) and not page.has_newer
    page = svc.history(sid, limit=10, after=25)
    assert page.messages == [] and page.has_more and page.next_before == 26


def test_empty_session(svc: SessionService) -> None:
    sid = _session(svc, 0)
    page = svc.history(sid)
    assert page.messages == [] and not page.has_more and page.next_before is None


def test_pages_never_use_offset(svc: SessionService) -> None:
    sid = _session(svc, 30)
    svc.list_sessions()
    statements: list[str] = []
    svc._db().set_trace_callback(statements.append)
    svc.history(sid, limit=5)
    svc.history(sid, limit=5, before=10)
    svc.history(sid, limit=5, around=15)
    svc.list_sessions(limit=1)
    assert any("msg_seq <" in s for s in statements)
    assert not any("OFFSET" in s.upper() for s in statements)


def _raw_session(home: Path, project: Path, sid: str, ts: str) -> None:
    phash = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    folder = home / "history" / phash
    folder.mkdir(parents=True, exist_ok=True)
    rec = {"type": "session_start", "seq": 1, "timestamp": ts, "session_id": sid}
    (folder / f"session-20260101-000000-{sid}.jsonl").write_text(json.dumps(rec) + "\n")


def test_session_list_keyset_with_ties(svc: SessionService, home: Path, project: Path) -> None:
    stamps = [f"2026-01-0{d}T00:00:00.000Z" for d in (1, 2, 2, 2, 3, 4, 4)]
    ids = [f"{i:012x}" for i in range(7)]
    for sid, ts in zip(ids, stamps, strict=True):
        _raw_session(home, project, sid, ts)
    expected = [s for _, s in sorted(zip(stamps, ids, strict=True), reverse=True)]
    seen, cursor = [], None
    for _ in range(5):
        page = svc.list_sessions(limit=3, cursor=cursor)
        seen += [s.id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == expected
    with pytest.raises(MttuiError):
        svc.list_sessions(cursor="not-a-cursor")
