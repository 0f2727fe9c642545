"""Every refusal and warning code of resume.md, produced in its situation, through the
CLI in real processes (``resume-check`` never writes; ``exec --resume`` applies)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from mttui.session.log import dump_record
from mttui.session.paths import project_hash
from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.resume import (
    assert_every_call_answered,
    check,
    checkpoints_db,
    cli,
    codes,
    index_equals_rebuild,
    json_events,
    recheck,
    request_text,
)


def _fake_env(fake: FakeOpenAI) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}


def _exec(home: Path, project: Path, *args: str, code: int = 0, **env: str) -> list[dict]:
    r = cli(home, project, "exec", "--json", *args, **env)
    assert r.returncode == code, r.stderr
    assert "Traceback" not in r.stderr
    return json_events(r.stdout)


def _resumed(evs: list[dict]) -> tuple[str, list[str]]:
    e = next(e for e in evs if e["event"] == "resumed")
    return e["mode"], [w["code"] for w in e["warnings"]]


def _log(home: Path, project: Path, sid: str) -> Path:
    return SessionService(home, project).resolve(sid).path


def test_deleted_checkpoint_database_resumes_the_transcript(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.add(tools([("call_1", "list_dir", {"path": "."})]), text("listed it"),
                    text("second answer"))  # fmt: skip
    env = _fake_env(fake_openai)
    sid = _exec(home, project, "list the project", **env)[0]["session_id"]
    _exec(home, project, "--session", sid, "and now?", **env)
    db = checkpoints_db(home, project)
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    plan = check(home, project, sid)
    assert not db.exists()  # a missing database stays missing
    assert plan["mode"] == "transcript" and plan["refusal"]["code"] == "checkpoint_not_found"
    assert codes(plan) == ["execution_not_restored"] and plan["messages_in_view"] == 6
    fake_openai.add(text("third answer"))
    evs = _exec(home, project, "--resume", sid, "third question", **env)
    assert _resumed(evs) == ("transcript", ["execution_not_restored"])
    new_thread = next(e for e in evs if e["event"] == "resumed")["thread_id"]
    updates = [r for r in records(_log(home, project, sid)) if r["type"] == "session_update"]
    assert updates[-1]["thread_id"] == new_thread != evs[0]["thread_id"]
    sent = fake_openai.requests[-1]
    assert_every_call_answered(sent)
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                     "user"]  # fmt: skip
    assert "listed it" in request_text(sent) and "second answer" in request_text(sent)
    again = recheck(home, project, sid)  # rebuilt into a fresh thread: execution from now on
    assert (again["mode"], codes(again)) == ("execution", [])
    index_equals_rebuild(home, tmp_path)


def test_missing_thread_id(home: Path, project: Path) -> None:
    folder = home / "history" / project_hash(project)
    folder.mkdir(parents=True)
    path = folder / "session-20260101-000000-abcdef012345.jsonl"
    base = {"timestamp": "2026-01-01T00:00:00.000Z", "session_id": "abcdef012345"}
    lines = [
        {"type": "session_start", "seq": 1, "v": 1, "project": str(project), "provider": "offline",
         "model": "offline", **base},
        {"type": "transcript_message", "seq": 2, **base,
         "message": {"id": "msg-1", "role": "user", "content": "an old question"}},
        {"type": "transcript_message", "seq": 3, **base, "message": {
            "id": "msg-2", "role": "assistant", "content": "",
            "tool_calls": [{"id": "call_x", "name": "shell", "args": {"command": "echo x"}}]}},
    ]  # fmt: skip
    path.write_bytes(b"".join(dump_record(r) for r in lines))
    os.chmod(path, 0o600)
    plan = check(home, project, "abcdef012345")
    assert plan["mode"] == "transcript" and plan["refusal"]["code"] == "missing_thread_id"
    assert codes(plan) == ["dangling_tool_call_closed", "execution_not_restored"]
    assert plan["dangling_tool_calls"] == ["call_x"]
    evs = _exec(home, project, "--resume", "abcd", "--provider", "offline", "go on")
    assert _resumed(evs) == ("transcript", ["dangling_tool_call_closed", "execution_not_restored"])
    outcomes = [r for r in records(path) if r["type"] == "tool_outcome"]
    assert [(o["call_id"], o["status"]) for o in outcomes] == [("call_x", "cancelled")]
    assert not (project / "x").exists()


def test_approval_without_a_recoverable_interrupt(home: Path, project: Path) -> None:
    evs = _exec(home, project, "!echo ran >> runs.txt", code=3)
    sid = evs[0]["session_id"]
    conn = sqlite3.connect(checkpoints_db(home, project))
    assert conn.execute("DELETE FROM writes WHERE channel = '__interrupt__'").rowcount > 0
    conn.commit()
    conn.close()
    plan = check(home, project, sid)
    assert plan["mode"] == "transcript"
    assert plan["refusal"]["code"] == "approval_state_inconsistent"
    assert codes(plan) == ["dangling_tool_call_closed", "execution_not_restored"]
    assert plan["pending_approval"] is None
    evs = _exec(home, project, "--resume", sid, "--approve", "all")
    assert _resumed(evs)[0] == "transcript"
    assert not any(e["event"] == "approval_request" for e in evs)
    assert not (project / "runs.txt").exists()  # closed as cancelled, never run
    decision = [r for r in records(_log(home, project, sid))
                if r["type"] == "approval_decision"]  # fmt: skip
    assert [d["request_id"] for d in decision] == [_request_id(home, project, sid)]
    again = recheck(home, project, sid)  # the stale request is closed: execution from now on
    assert (again["mode"], codes(again)) == ("execution", [])
    assert _exec(home, project, "--resume", sid) and not (project / "runs.txt").exists()


def _request_id(home: Path, project: Path, sid: str) -> str:
    recs = records(_log(home, project, sid))
    return str(next(r["request_id"] for r in recs if r["type"] == "approval_request"))


def test_corrupt_lines_and_held_queue_items(home: Path, project: Path) -> None:
    sid = _exec(home, project, "hello")[0]["session_id"]
    path = _log(home, project, sid)
    base = {"timestamp": "2026-01-01T00:00:00.000Z", "session_id": sid}
    with open(path, "ab") as fh:
        fh.write(b"{not json at all\n")
        for seq, rec in enumerate([
            {"type": "pending_add", "item_id": "q1", "mode": "queue", "text": "later"},
            {"type": "pending_add", "item_id": "q2", "mode": "queue", "text": "dropped"},
            {"type": "pending_remove", "item_id": "q2"},
        ], start=100):  # fmt: skip
            fh.write(dump_record({**rec, "seq": seq, **base}))
    indexer = SessionService(home, project)
    indexer.catch_up()
    indexer.close()  # a connection left to the garbage collector may write index.sqlite later
    plan = check(home, project, sid)
    assert (plan["mode"], codes(plan)) == ("execution", ["corrupt_lines_skipped", "queue_held"])
    warn = {w["code"]: w for w in plan["warnings"]}
    assert warn["corrupt_lines_skipped"]["count"] == 1
    assert (warn["queue_held"]["count"], warn["queue_held"]["ids"]) == (1, ["q1"])


def test_unknown_locked_and_empty_sessions(home: Path, project: Path) -> None:
    r = cli(home, project, "resume-check", "ffffffffffff", "--json")
    assert r.returncode == 5 and json.loads(r.stdout)["refusal"]["code"] == "session_not_found"
    assert r.stderr.count("\n") == 1
    assert cli(home, project, "exec", "--resume", "ffffffffffff").returncode == 5
    sid = _exec(home, project, "hello")[0]["session_id"]
    service = SessionService(home, project)
    with service.open_session(service.resolve(sid).path):
        plan = check(home, project, sid)  # the check still answers
        assert plan["mode"] == "refused" and plan["refusal"]["code"] == "session_locked"
        assert plan["unlocked_mode"] == "execution" and plan["locked_by"] == os.getpid()
        locked = cli(home, project, "exec", "--resume", sid, "more")
        assert locked.returncode == 4 and "open for writing" in locked.stderr
    with service.create_session(provider="offline", model="offline") as w:
        empty = w.session_id
    plan = check(home, project, empty)  # stopped before its first message: it continues
    assert (plan["mode"], plan["refusal"], plan["warnings"]) == ("execution", None, [])
    assert _resumed(_exec(home, project, "--session", empty, "hi")) == ("execution", [])


def test_doctor_reports_resume_verdicts(home: Path, project: Path) -> None:
    ran = _exec(home, project, "hello")[0]["session_id"]
    with SessionService(home, project).create_session(provider="p", model="m") as w:
        empty = w.session_id
    doc = json.loads(cli(home, project, "doctor", "--json").stdout)
    assert set(doc) == {"sessions_checked", "problems", "repaired"}
    assert doc["problems"] == [] and empty  # a session without messages can continue
    checkpoints_db(home, project).unlink()
    doc = json.loads(cli(home, project, "doctor", "--json").stdout)
    found = {(p["session_id"], p["code"]) for p in doc["problems"]}
    assert found == {(ran, "checkpoint_not_found")}
