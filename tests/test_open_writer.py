"""Opening a session for writing finds its current thread without re-reading the whole log."""

from __future__ import annotations

from pathlib import Path

import pytest

import mttui.session.service as service_module
from mttui.session.service import SessionService
from tests.support.logs import message, new_session


def _session_with_new_thread(home: Path, project: Path) -> Path:
    svc = SessionService(home, project)
    path = new_session(svc, [message("m1", "user", "hi", status="sent"),
                             ("session_update", {"thread_id": "thread-second"})],
                       provider="offline", model="offline").path
    svc.close()
    return path


def test_thread_comes_from_the_index_when_it_has_the_whole_file(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session_with_new_thread(home, project)

    def no_full_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole log was read to open it")

    monkeypatch.setattr(service_module, "read_records", no_full_read)
    svc = SessionService(home, project)
    with svc.open_session(path) as w:
        assert w.thread_id == "thread-second"


def test_thread_comes_from_the_log_when_the_index_is_gone(home: Path, project: Path) -> None:
    path = _session_with_new_thread(home, project)
    # a record appended behind the index's back (another tool, a crash before indexing)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"session_update","seq":4,"timestamp":"2026-01-01T00:00:00.000Z",'
                 '"session_id":"x","thread_id":"thread-third"}\n')
    (home / "index.sqlite").unlink()
    svc = SessionService(home, project)
    with svc.open_session(path) as w:
        assert w.thread_id == "thread-third"
