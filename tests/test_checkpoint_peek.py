"""The light checkpoint reader gives the resume planner what ``get_state`` gives it.

Every situation the resume and crash tests build is planned twice — from the peek and
from LangGraph's ``get_state`` — and the plans must be the same JSON; the raw facts
are compared too. A fresh ``mttui resume-check`` imports no LangGraph when the peek
reads the checkpoint, and asks LangGraph when it does not recognise something.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from langchain_core.messages import AIMessage

from mttui.graph.resume.apply import resume_session
from mttui.graph.resume.plan import check_resume, graph_state
from mttui.session.checkpoint_messages import REFS
from mttui.session.checkpoint_peek import PeekState, peek_state
from mttui.session.paths import Layout, project_hash
from mttui.session.resume.check import check_log
from tests.support.crash import POINTS, World, parallel_call_crash
from tests.support.fake_openai import FakeOpenAI
from tests.support.logs import append_behind
from tests.support.resume import check, checkpoints_db, cli, codes

LONG = "please remember this detail about the parser module. " * 12
NULL_TASK = "00000000-0000-0000-0000-000000000000"


def _facts(state: Any) -> dict[str, Any]:
    """What the planner reads of a state, as comparable data."""
    values = state.values
    return {
        "keys": sorted(values),
        "messages": [(m.id, m.type, [c["id"] for c in getattr(m, "tool_calls", None) or []],
                      getattr(m, "tool_call_id", None)) for m in values.get("messages", [])],
        "approval": [values.get(k) for k in ("needs_human_approval", "approval_requests",
                                              "pending_tool_calls")],
        "next": sorted(state.next),
        "interrupts": [(i.id, i.value) for i in state.interrupts],
    }  # fmt: skip


def same_plan(home: Path, project: Path, sid: str, *, peeked: bool = True) -> dict[str, Any]:
    """The plan from the peek equals the plan from ``get_state`` (returned); ``peeked``:
    whether the peek is expected to read the checkpoint (else it must say ``None``)."""
    layout, phash = Layout(home), project_hash(project)
    plan, facts = check_log(layout, phash, sid, lock=False)
    if facts is not None and plan.mode == "execution":
        db = layout.checkpoints_path(facts.project_hash)
        peek = peek_state(db, facts.thread_id or "")
        assert (peek is not None) == peeked
        if peek is not None:
            assert _facts(peek) == _facts(graph_state(db, facts.thread_id or ""))
    light = check_resume(layout, phash, sid).as_json()
    assert light == check_resume(layout, phash, sid, peek=False).as_json()
    return light


def _sql(db: Path, query: str, *args: Any) -> int:
    conn = sqlite3.connect(db)
    try:
        n = conn.execute(query, args).rowcount
        conn.commit()
    finally:
        conn.close()
    return n


def test_in_process_situations(make_runner: Any, home: Path, project: Path) -> None:
    plain = make_runner()
    sid = plain.writer.session_id
    for text in ("hello", "/ls", "!echo after > after.txt"):
        list(plain.run(text))
        plan = same_plan(home, project, sid)
    assert codes(plan) == ["approval_pending"]  # awaiting approval
    req = plain.pending_approval()
    list(plain.answer_approval(req.request_id, {req.tool_calls[0]["call_id"]: "approve"}))
    assert codes(same_plan(home, project, sid)) == []

    compressed = make_runner(auto_compress=False)
    for i in range(4):
        list(compressed.run(f"turn {i}: {LONG}"))
    list(compressed.compact())
    list(compressed.run("!echo later > later.txt"))  # awaiting approval after compression
    append_behind(compressed.writer,
                  {"type": "tool_dispatch", "call_id": "call_z", "tool_name": "shell"},
                  {"type": "pending_add", "item_id": "q1", "mode": "queue", "text": "later"})
    plan = same_plan(home, project, compressed.writer.session_id)
    assert plan["compression_used"] and codes(plan) == [
        "tool_interrupted", "approval_pending", "queue_held"]
    # the checkpoint says an approval is awaited but its interrupt is gone
    assert _sql(compressed.checkpoints_path,
                "DELETE FROM writes WHERE channel = '__interrupt__'") > 0  # fmt: skip
    plan = same_plan(home, project, compressed.writer.session_id)
    assert plan["refusal"]["code"] == "approval_state_inconsistent"

    chained = make_runner(auto_compress=False)
    for i in range(3):
        list(chained.run(f"turn {i}: {LONG}"))
        list(chained.compact())
    assert same_plan(home, project, chained.writer.session_id)["compression_used"]

    crashed = make_runner()
    interrupted, dangling = parallel_call_crash(crashed)  # the kill -9 between two parallel calls
    plan = same_plan(home, project, crashed.writer.session_id)
    assert (plan["interrupted_tool_calls"], plan["dangling_tool_calls"]) == (
        [interrupted], [dangling])
    resume_session(crashed)
    assert codes(same_plan(home, project, crashed.writer.session_id)) == []
    crashed.writer.append("transcript_message", message={
        "id": "msg-log-only", "role": "assistant", "content": "only in the log",
        "status": "sent"})  # fmt: skip
    crashed.graph.update_state(crashed.config, {"messages": [
        AIMessage(content="only in the checkpoint", id="msg-ckpt-only")]}, as_node="observation")
    assert codes(same_plan(home, project, crashed.writer.session_id)) == [
        "history_length_mismatch", "transcript_incomplete"]

    moved = make_runner()
    parallel_call_crash(moved)
    moved.writer.append("session_update", thread_id="thread-gone")  # no checkpoint for it
    moved.invalidate()
    assert same_plan(home, project, moved.writer.session_id)["mode"] == "transcript"
    assert resume_session(moved).mode == "transcript"  # rebuilt into a fresh thread
    assert same_plan(home, project, moved.writer.session_id)["mode"] == "execution"


@pytest.mark.parametrize("point", list(POINTS))
def test_after_kill_9(point: str, home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    sid = POINTS[point][0](World(home, project, fake_openai))
    plan = same_plan(home, project, sid)
    assert (plan["mode"], codes(plan)) == ("execution", POINTS[point][1])


def _awaiting(make_runner: Any, home: Path, project: Path) -> tuple[Any, dict[str, Any]]:
    runner = make_runner()
    list(runner.run("!echo ran >> runs.txt"))
    plan = same_plan(home, project, runner.writer.session_id)
    assert codes(plan) == ["approval_pending"]
    return runner, plan


def _imported(stderr: str) -> set[str]:
    """Top-level packages named by ``-X importtime`` output."""
    return {line.rsplit("|", 1)[-1].strip().split(".")[0]
            for line in stderr.splitlines() if line.startswith("import time:")}  # fmt: skip


def test_fresh_process_reads_without_langgraph(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner, plan = _awaiting(make_runner, home, project)
    sid = runner.writer.session_id
    runner.close()
    runner.writer.close()  # else the other process sees the session open for writing
    r = cli(home, project, "resume-check", sid, "--json", PYTHONPROFILEIMPORTTIME="1")
    assert r.returncode == 0 and json.loads(r.stdout) == plan
    loaded = _imported(r.stderr)
    assert "mttui" in loaded and "ormsgpack" in loaded
    assert not [n for n in loaded if n.startswith(("langgraph", "langchain", "textual"))]
    # a write the peek does not recognise (an unknown msgpack extension; LangGraph reads
    # it as None and ignores a resume value of no task): LangGraph answers instead
    db = checkpoints_db(home, project)
    ckpt = sqlite3.connect(db).execute(
        "SELECT thread_id, checkpoint_id FROM checkpoints").fetchone()
    _sql(db, "INSERT INTO writes VALUES (?, '', ?, ?, '', -4, '__resume__', "
         "'msgpack', ?)", *ckpt, NULL_TASK, ormsgpack.packb(ormsgpack.Ext(42, b"\xc0")))
    assert check(home, project, sid) == plan  # no file changed
    r = cli(home, project, "resume-check", sid, "--json", PYTHONPROFILEIMPORTTIME="1")
    assert json.loads(r.stdout) == plan and "langgraph" in _imported(r.stderr)
    same_plan(home, project, sid, peeked=False)


class _Ext:
    """A msgpack extension kept as it is (``ormsgpack.Ext`` does not expose its parts)."""

    def __init__(self, code: int, data: bytes) -> None:
        self.code, self.data = code, data


def _repack(db: Path, edit: Any) -> None:
    """Rewrite the newest checkpoint blob through ``edit(checkpoint_dict)``."""
    conn = sqlite3.connect(db)
    cid, blob = conn.execute("SELECT checkpoint_id, checkpoint FROM checkpoints "
                             "ORDER BY checkpoint_id DESC LIMIT 1").fetchone()  # fmt: skip
    ckpt = ormsgpack.unpackb(blob, ext_hook=_Ext, option=ormsgpack.OPT_NON_STR_KEYS)
    edit(ckpt)
    new = ormsgpack.packb(ckpt, default=lambda e: ormsgpack.Ext(e.code, e.data),
                          option=ormsgpack.OPT_NON_STR_KEYS)  # fmt: skip
    conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (new, cid))
    conn.commit()
    conn.close()


def _task_id(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("SELECT task_id FROM writes").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("change", [
    "unknown_type", "corrupt_blob", "other_version", "delta_channel", "unknown_extension",
    "join_channel", "finished_task", "write_of_no_task", "unknown_message"])  # fmt: skip
def test_what_the_peek_does_not_recognise(
    change: str, make_runner: Any, home: Path, project: Path
) -> None:
    runner, _ = _awaiting(make_runner, home, project)
    db, sid = runner.checkpoints_path, runner.writer.session_id
    if change == "unknown_type":
        _sql(db, "UPDATE checkpoints SET type = 'msgpack-v9'")
    elif change == "corrupt_blob":
        _sql(db, "UPDATE checkpoints SET checkpoint = x'c1c1c1'")
    elif change == "other_version":
        _repack(db, lambda c: c.update(v=5))
    elif change == "delta_channel":  # a channel with a version but no stored value
        _repack(db, lambda c: c["channel_values"].pop("pending_tool_calls"))
    elif change == "unknown_extension":
        _repack(db, lambda c: c["channel_values"].update(error=_Ext(42, b"\xc0")))
    elif change == "join_channel":
        _repack(db, lambda c: c["channel_versions"].update({"join:a+b:c": "1"}))
    elif change == "finished_task":  # its write would change the state LangGraph shows
        _sql(db, "INSERT INTO writes SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, "
             "task_path, 0, 'needs_human_approval', 'msgpack', ? FROM writes",
             ormsgpack.packb(False))  # fmt: skip
    elif change == "write_of_no_task":
        _sql(db, "UPDATE writes SET task_id = ?", _task_id(db)[::-1])
    elif change == "unknown_message":
        def chunk(c: dict[str, Any]) -> None:  # the last message, stored apart
            conn = sqlite3.connect(db)
            key = c["channel_values"][REFS][-1]
            ext = ormsgpack.unpackb(conn.execute(
                "SELECT value FROM checkpoint_messages WHERE key = ?", (key,)).fetchone()[0],
                ext_hook=_Ext)  # fmt: skip
            data = ormsgpack.unpackb(ext.data)
            data[1] = "AIMessageChunk"
            new = ormsgpack.packb(ormsgpack.Ext(ext.code, ormsgpack.packb(data)))
            conn.execute("UPDATE checkpoint_messages SET value = ? WHERE key = ?", (new, key))
            conn.commit()
            conn.close()
        _repack(db, chunk)
    tid = runner.writer.thread_id
    assert peek_state(db, tid) is None
    same_plan(home, project, sid, peeked=False)


def test_no_checkpoint_database_or_thread(tmp_path: Path) -> None:
    assert peek_state(tmp_path / "missing.sqlite", "t") is None
    assert not (tmp_path / "missing.sqlite").exists()


def test_peek_state_shape(make_runner: Any, home: Path, project: Path) -> None:
    runner, plan = _awaiting(make_runner, home, project)
    state = peek_state(runner.checkpoints_path, runner.writer.thread_id)
    assert isinstance(state, PeekState) and state.next == ("human_approval",)
    assert [i.value["request_id"] for i in state.interrupts] == [
        plan["pending_approval"]["request_id"]]
    assert peek_state(runner.checkpoints_path, "no-such-thread") is None


def test_the_session_package_imports_no_langgraph() -> None:
    code = ("import pkgutil, sys, importlib, mttui.session\n"
            "for m in pkgutil.walk_packages(mttui.session.__path__, 'mttui.session.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(' '.join(sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    assert "mttui.session.checkpoint_peek" in out
    assert not [n for n in out if n.startswith(("langgraph", "langchain", "textual"))]
