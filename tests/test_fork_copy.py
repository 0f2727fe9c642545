"""The fast fork: raw log lines and index rows copied, FTS rows owed until a search;
the index it leaves equals a rebuild from the logs (in-process, real files)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mttui.config import load_settings
from mttui.core.fork import fork
from mttui.session.index.ingest import build_index
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.index_dump import logical_dump
from tests.support.logs import records


def _source(service: SessionService, *, update: bool = False) -> str:
    """A session with tool calls, usage, CJK text and a compression."""
    w = service.create_session(provider="offline", model="m", title=None)
    sid = w.session_id

    def msg(i: int, role: str, content: str, **extra: object) -> None:
        w.append("transcript_message",
                 message={"id": f"msg-{i}", "role": role, "content": content, "status": "sent",
                          **extra})

    msg(1, "user", "快速排序 how does it work")
    msg(2, "assistant", "", tool_calls=[{"id": "c1", "name": "read_file", "args": {"p": "a"}}],
        usage={"input_tokens": 10, "output_tokens": 3})
    w.append("tool_dispatch", run_id="r1", call_id="c1", tool_name="read_file",
             arguments_sha256="x")
    w.append("tool_outcome", run_id="r1", call_id="c1", status="success")
    msg(3, "tool", "file a", tool_call_id="c1", name="read_file")
    msg(4, "assistant", "缓存 answer one", usage={"input_tokens": 20, "output_tokens": 5})
    w.append("compression", summary="what was said", removed_count=2, kept_count=2,
             kept_message_ids=["msg-3", "msg-4"], trigger="manual", tokens_before=9,
             tokens_after=3)
    msg(5, "user", "second question")
    if update:
        w.append("message_update", message_id="msg-5", status="sent", content="second, edited")
    msg(6, "assistant", "second answer", usage={"input_tokens": 30, "output_tokens": 7})
    w.append("session_end", stats={"turns": 2, "tool_calls": 1})
    w.close()
    return sid


def _owed(home: Path) -> list[tuple[int, int]]:
    conn = sqlite3.connect(home / "index.sqlite")
    try:
        return conn.execute("SELECT sess, upto FROM fts_owed").fetchall()
    finally:
        conn.close()


def _equals_rebuild(service: SessionService, tmp: Path) -> None:
    service.close()
    rebuilt = tmp / "rebuilt.sqlite"
    build_index(service.layout, rebuilt)
    assert logical_dump(service.layout.index_path) == logical_dump(rebuilt)


def test_fork_copies_lines_and_rows_and_equals_a_rebuild(
    home: Path, project: Path, service: SessionService, tmp_path: Path
) -> None:
    sid = _source(service)
    raw = service.resolve(sid).path.read_bytes()
    result = fork(service, load_settings({"provider": "offline"}), sid, at=6)
    assert result.messages == 6 and result.adjusted_from is None
    assert len(_owed(home)) == 1  # the fast path: FTS rows owed, not written
    log = records(service.resolve(result.session_id).path)
    assert [r["seq"] for r in log] == list(range(1, len(log) + 1))
    assert {r["session_id"] for r in log} == {result.session_id}
    assert [r["type"] for r in log] == ["session_start"] + ["transcript_message"] * 4 + [
        "compression"] + ["transcript_message"] * 2 + ["session_update"]
    assert log[-1]["fork_state"] == "done"  # the copy and the seed finished
    src = fold(records(service.resolve(sid).path))
    copy = fold(log)
    assert [m["id"] for m in copy.messages] == [m["id"] for m in src.messages]
    assert copy.model_view()[0] == "what was said"
    assert service.resolve(sid).path.read_bytes() == raw
    hits = service.search("缓存", scope="project")  # pays the FTS rows first
    assert {h.session_id for h in hits} == {sid, result.session_id}
    assert _owed(home) == []
    assert {h.session_id for h in service.search("排序")} == {sid, result.session_id}
    _equals_rebuild(service, tmp_path)


def test_fork_inside_a_tool_batch_moves_back_on_the_fast_path(
    home: Path, project: Path, service: SessionService, tmp_path: Path
) -> None:
    sid = _source(service)
    result = fork(service, load_settings({"provider": "offline"}), sid, at=2)
    assert (result.seq, result.adjusted_from, result.messages) == (1, 2, 1)
    assert len(_owed(home)) == 1
    assert [h.seq for h in service.search("排序", session_id=result.session_id)] == [1]
    _equals_rebuild(service, tmp_path)


def test_edits_and_deletes_of_forks_keep_the_index_whole(
    home: Path, project: Path, service: SessionService, tmp_path: Path
) -> None:
    settings = load_settings({"provider": "offline"})
    edited_src = _source(service, update=True)
    edited = fork(service, settings, edited_src)
    early = fork(service, settings, edited_src, at=4)  # the update comes after the point
    assert early.messages == 4
    assert _owed(home) == []  # a source with message updates: the fork's log is re-read
    copy = fold(records(service.resolve(edited.session_id).path))
    assert copy.messages[4]["content"] == "second, edited"
    plain = _source(service)
    gone = fork(service, settings, plain, at=4)
    kept = fork(service, settings, plain)
    assert len(_owed(home)) == 2
    service.delete(gone.session_id)  # its owed FTS rows must not corrupt the table
    with service.open_writer(kept.session_id) as w:  # a copied row's text changes
        w.append("message_update", message_id="msg-1", content="rewritten first question")
    assert _owed(home) == []
    assert {h.session_id for h in service.search("edited")} == {edited_src, edited.session_id}
    assert {h.session_id for h in service.search("rewritten")} == {kept.session_id}
    # the kept fork's message no longer says it, its title ("… (fork)") still does
    assert {h.session_id for h in service.search("排序")} == {
        edited_src, edited.session_id, early.session_id, plain, kept.session_id}
    _equals_rebuild(service, tmp_path)
