"""SessionService end to end on real files and a real index."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mttui.session.errors import MttuiError, SessionLocked, SessionNotFound
from mttui.session.lock import SessionLock
from mttui.session.models import SNIPPET_END, SNIPPET_START
from mttui.session.service import SessionService


def hand_written_log(home: Path, project: Path, sid: str, lines: list[dict]) -> Path:
    """A log written from storage.md alone: raw JSON lines, no mttui code."""
    phash = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    folder = home / "history" / phash
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"session-20260301-101500-{sid}.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for seq, line in enumerate(lines, 1):
            base = {"seq": seq, "timestamp": f"2026-03-01T10:15:{seq:02d}.000Z", "session_id": sid}
            fh.write(json.dumps({**base, **line}, ensure_ascii=False) + "\n")
    return path


def storage_md_session(home: Path, project: Path, sid: str = "0123456789ab") -> Path:
    msg = {"type": "transcript_message"}
    return hand_written_log(home, project, sid, [
        {"type": "session_start", "v": 1, "thread_id": "thread-a", "project": str(project),
         "project_hash": "x", "provider": "openai", "model": "gpt", "title": None,
         "app_version": "0"},
        {**msg, "message": {"id": "msg-1", "role": "user",
                            "content": "Wie schnell ist 快速排序 in Python?\nsecond line"}},
        {"type": "run_start", "run_id": "run-1"},
        {**msg, "message": {"id": "msg-2", "role": "assistant", "content": "",
                            "tool_calls": [{"id": "call_1", "name": "shell",
                                            "args": {"command": "ls"}}]}},
        {"type": "tool_dispatch", "run_id": "run-1", "call_id": "call_1", "tool_name": "shell",
         "arguments_sha256": "00"},
        {"type": "tool_outcome", "run_id": "run-1", "call_id": "call_1", "status": "success"},
        {**msg, "message": {"id": "msg-3", "role": "tool", "content": "README.md",
                            "tool_call_id": "call_1", "name": "shell"}},
        {**msg, "message": {"id": "msg-4", "role": "assistant", "content": "Quicksort is fast",
                            "status": "sent", "usage": {"input_tokens": 5, "output_tokens": 3}}},
        {"type": "run_end", "run_id": "run-1", "status": "completed"},
        {"type": "session_end", "stats": {"turns": 1}},
    ])  # fmt: skip


def test_hand_written_log_is_listed_paged_searched_exported_and_deleted(
    svc: SessionService, home: Path, project: Path
) -> None:
    path = storage_md_session(home, project)
    [info] = svc.list_sessions().sessions
    assert info.id == "0123456789ab"
    assert info.title == "Wie schnell ist 快速排序 in Python?"
    assert info.message_count == 4
    assert info.created_at == "2026-03-01T10:15:01.000Z"
    assert info.updated_at == "2026-03-01T10:15:09.000Z"  # activity: not the session_end
    assert (info.provider, info.model, info.thread_id) == ("openai", "gpt", "thread-a")
    assert info.last_message_preview == "Quicksort is fast"
    page = svc.history(info.id, limit=2)
    assert [m.seq for m in page.messages] == [3, 4] and page.has_more and page.next_before == 3
    older = svc.history(info.id, before=3)
    assert [m.id for m in older.messages] == ["msg-1", "msg-2"]
    assert older.messages[1].tool_calls == [
        {"id": "call_1", "name": "shell", "args": {"command": "ls"}}
    ]
    [hit] = svc.search("快速排序")
    assert (hit.session_id, hit.seq, hit.message_id) == (info.id, 1, "msg-1")
    assert f"{SNIPPET_START}快速排序{SNIPPET_END}" in hit.snippet
    markdown = "".join(svc.export(info.id, "markdown"))
    assert "Quicksort is fast" in markdown and "`shell`" in markdown
    assert len("".join(svc.export(info.id, "jsonl")).splitlines()) == 10
    svc.delete(info.id)
    assert not path.exists()
    assert svc.list_sessions().sessions == []
    with pytest.raises(SessionNotFound):
        svc.get(info.id)


def test_status_badges_title_thread_and_counts(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m", title=None) as w:
        w.append("transcript_message", message={"id": "u1", "role": "user", "content": "  \n"})
        w.append("transcript_message", message={"id": "u2", "role": "user", "content": "Fix it"})
        w.append("approval_request", request_id="r1", run_id="x", tool_calls=[])
        w.append("approval_request", request_id="r2", run_id="x", tool_calls=[])
        w.append("approval_decision", request_id="r1", decisions={})
        w.append("tool_dispatch", run_id="x", call_id="c1", tool_name="shell")
        w.append("tool_dispatch", run_id="x", call_id="c2", tool_name="shell")
        w.append("tool_outcome", run_id="x", call_id="c2", status="success")
        w.append("pending_add", item_id="q1", mode="queue", text="a")
        w.append("pending_add", item_id="q2", mode="queue", text="b")
        w.append("pending_add", item_id="q3", mode="queue", text="c")
        w.append("pending_add", item_id="s1", mode="steer", text="d")
        w.append("pending_take", item_id="q1",
                 message={"id": "u3", "role": "user", "content": "a"})
        w.append("pending_remove", item_id="q2")
        w.append("compression", summary="s", removed_count=1, kept_count=1)
        last = w.append("session_update", thread_id="thread-2")  # a clear is activity
        w.append("session_end", stats={})  # closing is not
        sid = w.session_id
    info = svc.get(sid)
    assert info.title == "Fix it"  # derived: first user message with text
    assert info.status.awaiting_approval is True
    assert info.status.interrupted_tools == 1
    assert info.status.queued == 1
    assert info.compression_count == 1
    assert info.thread_id == "thread-2"
    assert info.message_count == 3  # a taken queue item is a user message (pending.md)
    assert info.updated_at == last["timestamp"]
    with svc.open_writer(sid) as w:
        w.append("approval_decision", request_id="r2", decisions={})
        w.append("tool_outcome", run_id="x", call_id="c1", status="interrupted")
    info = svc.get(sid)
    # closed as interrupted it may still have run: unsettled until the ledger settles it
    assert not info.status.awaiting_approval and info.status.interrupted_tools == 1
    with svc.open_writer(sid) as w:
        w.append("tool_resolution", call_id="c1", resolution="done", note="")
    assert svc.get(sid).status.interrupted_tools == 0


def test_title_precedence_start_then_update(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m", title="Given") as w:
        w.append("transcript_message", message={"id": "u", "role": "user", "content": "derived"})
        sid = w.session_id
    assert svc.get(sid).title == "Given"
    svc.rename(sid, "  Renamed \n title ")
    assert svc.get(sid).title == "Renamed title"
    with pytest.raises(MttuiError):
        svc.rename(sid, "   ")


def test_rename_and_delete_refuse_while_written(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m") as w:
        with pytest.raises(SessionLocked):
            svc.rename(w.session_id, "x")
        with pytest.raises(SessionLocked):
            svc.delete(w.session_id)
        with pytest.raises(SessionLocked):
            svc.open_writer(w.session_id)
        assert w.path.exists()
    assert svc.get(w.session_id).title is None


def test_resolve_last_prefix_full_and_errors(
    svc: SessionService, home: Path, project: Path, tmp_path: Path
) -> None:
    msg = {"type": "transcript_message", "message": {"id": "m", "role": "user", "content": "x"}}
    hand_written_log(home, project, "abcd00000001", [{"type": "session_start"}])
    hand_written_log(home, project, "abcd00000002", [{"type": "session_start"}, msg])
    other = tmp_path / "elsewhere"
    other.mkdir()
    hand_written_log(home, other, "ffff12345678", [{"type": "session_start"}])
    assert svc.resolve("last").id == "abcd00000002"  # its last record is the newest
    assert svc.resolve("abcd00000001").id == "abcd00000001"
    assert svc.resolve("ABCD00000001").id == "abcd00000001"
    assert svc.resolve("ffff").id == "ffff12345678"  # found in another project
    with pytest.raises(SessionNotFound, match="ambiguous"):
        svc.resolve("abcd")
    with pytest.raises(SessionNotFound, match="too short"):
        svc.resolve("abc")
    with pytest.raises(SessionNotFound, match="no session matches"):
        svc.resolve("9999")
    empty = SessionService(home, tmp_path)
    with pytest.raises(SessionNotFound, match="no session in this project"):
        empty.resolve("last")


def test_records_returns_readable_records_and_stats(
    svc: SessionService, home: Path, project: Path
) -> None:
    path = storage_md_session(home, project)
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
    records, stats = svc.records("0123456789ab")
    assert len(records) == 10 and stats.corrupt_lines == 1


def test_writer_updates_the_index_without_a_catch_up(svc: SessionService) -> None:
    assert svc.list_sessions().sessions == []  # the one automatic catch-up happens here
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "user", "content": "hi"})
        [info] = svc.list_sessions().sessions
        assert info.id == w.session_id and info.message_count == 1


def test_other_processes_changes_appear_after_catch_up(
    svc: SessionService, home: Path, project: Path
) -> None:
    assert svc.list_sessions().sessions == []
    path = storage_md_session(home, project)
    assert svc.list_sessions().sessions == []  # not caught up yet
    svc.catch_up()
    assert [s.id for s in svc.list_sessions().sessions] == ["0123456789ab"]
    path.unlink()
    svc.catch_up()
    assert svc.list_sessions().sessions == []


def test_partial_tail_waits_for_a_live_writer_then_counts_as_corrupt(
    svc: SessionService, home: Path, project: Path
) -> None:
    path = storage_md_session(home, project)
    lock = SessionLock(path)
    lock.acquire()
    with open(path, "ab") as fh:
        fh.write(b'{"type": "transcript_message", "seq": 11, "mess')
    svc.catch_up()
    assert svc.get("0123456789ab").status.corrupt_lines == 0
    lock.release()  # the writer died; the file itself did not change
    svc.catch_up()
    assert svc.get("0123456789ab").status.corrupt_lines == 1


def test_index_file_modes(svc: SessionService, home: Path) -> None:
    svc.list_sessions()
    assert svc.layout.index_path.stat().st_mode & 0o777 == 0o600
    assert os.stat(home).st_mode & 0o777 == 0o700


def test_all_projects_listing(svc: SessionService, home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    hand_written_log(home, other, "eeee00000000", [{"type": "session_start"}])
    assert svc.list_sessions().sessions == []
    assert [s.id for s in svc.list_sessions(all_projects=True).sessions] == ["eeee00000000"]
