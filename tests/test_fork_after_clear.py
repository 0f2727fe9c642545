"""Found by the stateful test: a fork of a session that was /cleared started its
model from the messages before the /clear (its log had no clear boundary), so the
fork opened with ``history_length_mismatch`` and a resume fell back to transcript mode."""

from __future__ import annotations

from pathlib import Path

from mttui.core.clear import clear_session
from mttui.core.fork import fork
from mttui.core.handle import SessionHandle
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.handles import offline
from tests.support.resume import codes, recheck


def test_a_fork_after_a_clear_keeps_the_clear(home: Path, service: SessionService,
                                              project: Path) -> None:
    handle = SessionHandle.create(service, offline(), "hello")
    try:
        list(handle.run("hello"))
        clear_session(handle.runner, handle.pending)
        list(handle.run("again"))
        sid = handle.session_id
    finally:
        handle.close()
    forked = fork(service, offline(), sid)
    assert codes(recheck(home, project, forked.session_id)) == []
    records, _ = service.records(forked.session_id)
    summary, view = fold(records).model_view()
    assert [m.get("content") for m in view if m.get("role") == "user"] == ["again"]
