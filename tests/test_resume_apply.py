"""The planner and the apply step in-process, on real sessions, logs and checkpoints:
the index-based plan equals the whole-log plan, the id comparison, idempotent apply."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from mttui.graph.resume.apply import plan_for_runner, resume_session
from mttui.graph.resume.plan import check_resume, refine
from mttui.session.index.schema import open_index
from mttui.session.log import dump_record
from mttui.session.reader import read_all
from mttui.session.resume.check import plan_from_facts
from mttui.session.resume.facts import index_facts, read_facts
from mttui.session.resume.lookup import resolve
from mttui.session.service import SessionService

LONG = "please remember this detail about the parser module. " * 12


def _both(home: Path, project: Path, sid: str) -> tuple[Any, Any]:
    service = SessionService(home, project)
    service.catch_up()
    conn = open_index(service.layout)
    assert conn is not None
    info = resolve(service.layout, service.project_hash, sid, conn)
    fast = index_facts(conn, info)
    conn.close()
    assert fast is not None and fast.source == "index"
    return fast, read_facts(info.path, info.id, info.project_hash)


def _same(fast: Any, full: Any) -> None:
    keys = ("has_start", "thread_id", "message_count", "corrupt_lines", "compression",
            "interrupted", "queued", "open_run", "decided", "requests_seen")  # fmt: skip
    assert {k: getattr(fast, k) for k in keys} == {k: getattr(full, k) for k in keys}
    assert [(m["id"], m.get("status"), m.get("content")) for m in fast.view] == [
        (m["id"], m.get("status"), m.get("content")) for m in full.view]
    assert [r["request_id"] for r in fast.open_requests] == [
        r["request_id"] for r in full.open_requests]
    for found in (True, False):
        a, b = plan_from_facts(fast, checkpoint_found=found), plan_from_facts(
            full, checkpoint_found=found)
        assert a.as_json() == b.as_json()


def _raw(writer: Any, *records: dict[str, Any]) -> None:
    """Records appended behind the writer's back (a later catch-up ingests them)."""
    with open(writer.path, "ab") as fh:
        for rec in records:
            fh.write(dump_record({"seq": 900, "timestamp": "2026-01-01T00:00:00.000Z",
                                  "session_id": writer.session_id, **rec}))  # fmt: skip


def test_index_plan_equals_whole_log_plan(make_runner: Any, home: Path, project: Path) -> None:
    plain = make_runner()
    list(plain.run("hello"))
    list(plain.run("/ls"))
    compressed = make_runner(auto_compress=False)
    for i in range(4):
        list(compressed.run(f"turn {i}: {LONG}"))
    last_user = [r["message"]["id"] for r in read_all(compressed.writer.path)[0]
                 if r["type"] == "transcript_message" and r["message"]["role"] == "user"][-1]
    compressed.writer.append("message_update", message_id=last_user, status="interrupted")
    list(compressed.compact())
    list(compressed.run("!echo after > after.txt"))  # awaiting approval after the compression
    _raw(compressed.writer, {"type": "tool_dispatch", "call_id": "call_z", "tool_name": "shell"},
         {"type": "pending_add", "item_id": "q1", "mode": "queue", "text": "later"},
         {"type": "pending_add", "item_id": "q2", "mode": "queue", "text": "sooner"},
         {"type": "pending_move", "item_id": "q2", "position": 1})
    with open(compressed.writer.path, "ab") as fh:
        fh.write(b"garbage\n")
    chained = make_runner(auto_compress=False)
    for i in range(3):
        list(chained.run(f"turn {i}: {LONG}"))
        list(chained.compact())
    for runner in (plain, compressed, chained):
        fast, full = _both(home, project, runner.writer.session_id)
        _same(fast, full)
        state = runner.graph.get_state(runner.config)
        a = refine(plan_from_facts(fast, checkpoint_found=True), fast, state)
        b = refine(plan_from_facts(full, checkpoint_found=True), full, state)
        assert a.as_json() == b.as_json()
    plan = check_resume(SessionService(home, project).layout, plain.writer.project_hash,
                        compressed.writer.session_id)  # fmt: skip
    assert plan.compression_used and plan.codes() == [
        "corrupt_lines_skipped", "tool_interrupted", "approval_pending", "queue_held"]
    assert plan.interrupted_tool_calls == ["call_z"]


def test_the_fast_path_never_reads_before_the_last_compression(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner(auto_compress=False)
    for i in range(4):
        list(runner.run(f"turn {i}: {LONG}"))
    list(runner.compact())
    list(runner.run("after the compression"))
    path = runner.writer.path
    data = path.read_bytes()
    first_turn = data.index(b"turn 0:")  # a removed message: bytes only the full read sees
    st = path.stat()
    path.write_bytes(data[:first_turn] + b"\xff" * 7 + data[first_turn + 7:])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the index still thinks it fresh
    fast, full = _both(home, project, runner.writer.session_id)
    assert fast.corrupt_lines == 0 and full.corrupt_lines == 1
    assert [m["id"] for m in fast.view] == [m["id"] for m in full.view]


def _crash_state(runner: Any) -> tuple[str, str]:
    """What a kill -9 between two parallel tool calls leaves: the assistant message
    with two calls in log and checkpoint, the first call dispatched, no outcomes."""
    list(runner.run("hello"))
    calls = [{"id": "call_1", "name": "shell", "args": {"command": "echo 1"}, "type": "tool_call"},
             {"id": "call_2", "name": "shell", "args": {"command": "echo 2"}, "type": "tool_call"}]
    ai = AIMessage(content="", id="msg-ai-crash", tool_calls=calls)
    runner.writer.append("transcript_message", message={
        "id": ai.id, "role": "assistant", "content": "", "status": "sent",
        "tool_calls": [{k: c[k] for k in ("id", "name", "args")} for c in calls]})
    runner.writer.append("run_start", run_id="run-crash")
    runner.writer.append("tool_dispatch", run_id="run-crash", call_id="call_1",
                         tool_name="shell", arguments_sha256="x")  # fmt: skip
    runner.graph.update_state(runner.config, {"messages": [ai]}, as_node="reasoning")
    return "call_1", "call_2"


def test_apply_closes_calls_once_and_twice_writes_nothing(make_runner: Any) -> None:
    runner = make_runner()
    interrupted, dangling = _crash_state(runner)
    plan, _ = plan_for_runner(runner)
    assert plan.codes() == ["tool_interrupted", "dangling_tool_call_closed"]
    assert (plan.interrupted_tool_calls, plan.dangling_tool_calls) == ([interrupted], [dangling])
    first = resume_session(runner)
    assert first.wrote and first.mode == "execution"
    records = read_all(runner.writer.path)[0]
    outcomes = [(r["call_id"], r["status"]) for r in records if r["type"] == "tool_outcome"]
    assert outcomes == [(interrupted, "interrupted"), (dangling, "cancelled")]
    assert records[-2]["type"] == "run_end" and records[-2]["status"] == "interrupted"
    assert records[-1]["type"] == "session_resumed"
    state = runner.graph.get_state(runner.config)
    assert state.next == ()
    msgs = state.values["messages"]
    assert [m.tool_call_id for m in msgs if m.type == "tool"] == [interrupted, dangling]
    second = resume_session(runner)
    assert not second.wrote and second.plan.codes() == []
    assert read_all(runner.writer.path)[0] == records
    assert runner.graph.get_state(runner.config).values["messages"] == msgs
    assert list(runner.run("go on"))[-1].status == "completed"


def test_transcript_mode_apply_is_idempotent(make_runner: Any, home: Path, project: Path) -> None:
    runner = make_runner()
    _crash_state(runner)
    old_thread = runner.writer.thread_id
    runner.writer.append("session_update", thread_id="thread-gone")  # no checkpoint for it
    runner.invalidate()
    first = resume_session(runner)
    assert first.mode == "transcript" and first.plan.refusal["code"] == "checkpoint_not_found"
    assert runner.writer.thread_id not in (old_thread, "thread-gone")
    records = read_all(runner.writer.path)[0]
    view = runner.graph.get_state(runner.config).values["messages"]
    assert [m.type for m in view] == ["human", "ai", "ai", "tool", "tool"]
    assert [m.content.split(":")[0] for m in view[3:]] == ["interrupted", "cancelled"]
    second = resume_session(runner)
    assert second.mode == "execution" and not second.wrote
    assert read_all(runner.writer.path)[0] == records


def test_history_mismatch_and_incomplete_transcript(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner()
    list(runner.run("hello"))
    layout = SessionService(home, project).layout
    phash, sid = runner.writer.project_hash, runner.writer.session_id
    assert check_resume(layout, phash, sid).codes() == []
    runner.writer.append("transcript_message", message={
        "id": "msg-log-only", "role": "assistant", "content": "only in the log",
        "status": "sent"})  # fmt: skip
    plan = check_resume(layout, phash, sid)
    assert plan.codes() == ["history_length_mismatch"]
    assert plan.warnings[0].ids == ["msg-log-only"]
    runner.graph.update_state(runner.config, {"messages": [
        AIMessage(content="only in the checkpoint", id="msg-ckpt-only")]}, as_node="observation")
    plan = check_resume(layout, phash, sid)
    assert plan.codes() == ["history_length_mismatch", "transcript_incomplete"]
    assert plan.warnings[1].ids == ["msg-ckpt-only"] and plan.mode == "execution"
    # an error line is display-only: never a mismatch
    runner.writer.append("transcript_message", message={
        "id": "msg-err", "role": "assistant", "content": "run failed", "status": "error"})
    assert check_resume(layout, phash, sid).warnings[0].ids == ["msg-log-only"]


def test_an_unreadable_checkpoint_is_treated_as_missing(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner()
    list(runner.run("hello"))
    conn = sqlite3.connect(runner.checkpoints_path)
    conn.execute("UPDATE checkpoints SET checkpoint = x'c1c1c1'")
    conn.commit()
    conn.close()
    layout = SessionService(home, project).layout
    plan = check_resume(layout, runner.writer.project_hash, runner.writer.session_id)
    assert plan.mode == "transcript" and plan.refusal["code"] == "checkpoint_not_found"
    assert "cannot be read" in plan.refusal["message"]
    runner.close()
    outcome = resume_session(runner)
    assert outcome.mode == "transcript"
    assert list(runner.run("go on"))[-1].status == "completed"
