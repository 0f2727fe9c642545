"""``mttui queue …`` as scripts use it: JSON shapes, exit codes, the write lock."""

from __future__ import annotations

import json
from pathlib import Path

from mttui.session.pending import CAPACITY
from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import message, new_session
from tests.support.resume import cli, json_events


def _session(home: Path, project: Path) -> str:
    return new_session(SessionService(home, project), [message("u1", "user", "hi", status="sent")],
                       provider="offline").session_id


def test_list_add_edit_move_remove(home: Path, project: Path) -> None:
    sid = _session(home, project)
    assert json.loads(cli(home, project, "queue", "list", sid, "--json").stdout) == {
        "session_id": sid, "held": False, "items": []}  # fmt: skip
    ids = []
    for n in range(CAPACITY):
        r = cli(home, project, "queue", "add", sid[:6], f"task {n}")
        assert r.returncode == 0, r.stderr
        ids.append(r.stdout.split()[1])
    full = cli(home, project, "queue", "add", sid, "one too many")
    assert full.returncode == 1 and "queue is full" in full.stderr
    assert len(full.stderr.strip().splitlines()) == 1 and "Traceback" not in full.stderr
    assert cli(home, project, "queue", "move", sid, ids[9][:12], "1").returncode == 0
    assert cli(home, project, "queue", "edit", sid, ids[0], "task zero").returncode == 0
    assert cli(home, project, "queue", "remove", sid, ids[1]).returncode == 0
    out = json.loads(cli(home, project, "queue", "list", sid, "--json").stdout)
    assert out["session_id"] == sid and out["held"] is True  # nobody has it open
    assert [(i["text"], i["position"], i["state"]) for i in out["items"][:3]] == [
        ("task 9", 1, "held"), ("task zero", 2, "held"), ("task 2", 3, "held")]  # fmt: skip
    item = out["items"][0]
    assert {"id", "mode", "text", "state", "position", "created_at"} <= set(item)
    assert item["mode"] == "queue" and item["id"] == ids[9]
    human = cli(home, project, "queue", "list", sid)
    assert "task 9" in human.stdout and "queue resume" in human.stdout
    sessions = json.loads(cli(home, project, "sessions", "--json").stdout)["sessions"]
    assert sessions[0]["status"]["queued"] == CAPACITY - 1  # the browser's ⧗ badge
    plan = json.loads(cli(home, project, "resume-check", sid, "--json").stdout)
    held = [w for w in plan["warnings"] if w["code"] == "queue_held"]
    assert held and held[0]["count"] == CAPACITY - 1
    bad = cli(home, project, "queue", "move", sid, ids[9], "99")
    assert bad.returncode == 1 and "between 1 and" in bad.stderr
    gone = cli(home, project, "queue", "edit", sid, "pend-nope", "x")
    assert gone.returncode == 1 and "no pending input" in gone.stderr


def test_exit_codes_locked_and_not_found(home: Path, project: Path) -> None:
    sid = _session(home, project)
    service = SessionService(home, project)
    with service.open_writer(sid):  # another process has the session open
        r = cli(home, project, "queue", "add", sid, "later")
        assert r.returncode == 4 and "open for writing" in r.stderr
        listed = cli(home, project, "queue", "list", sid, "--json")  # reading needs no lock
        assert listed.returncode == 0 and json.loads(listed.stdout)["held"] is False
    assert cli(home, project, "queue", "list", "ffffffff", "--json").returncode == 5
    assert cli(home, project, "queue", "list").returncode == 2


def test_resume_stops_at_an_approval_with_ask(home: Path, project: Path,
                                              fake_openai: FakeOpenAI) -> None:
    sid = _session(home, project)
    for t in ("write it", "then this"):
        assert cli(home, project, "queue", "add", sid, t).returncode == 0
    fake_openai.add(tools([("call_1", "write_file", {"path": "a.txt", "content": "x"})]),
                    text("written"), text("second"))  # fmt: skip
    extra = {"MTTUI_PROVIDER": "openai", "OPENAI_BASE_URL": fake_openai.url}
    r = cli(home, project, "queue", "resume", sid, "--json", **extra)
    assert r.returncode == 3, r.stderr
    lines = json_events(r.stdout)
    assert [e["event"] for e in lines if e["event"] in ("run_start", "approval_request",
            "run_end", "exit")] == ["run_start", "approval_request", "run_end", "exit"]
    assert lines[-1] == {"event": "exit", "session_id": sid, "code": 3}
    assert not (project / "a.txt").exists()
    left = json.loads(cli(home, project, "queue", "list", sid, "--json").stdout)["items"]
    assert [i["text"] for i in left] == ["then this"]
    # --approve all answers what waits first, then the queue goes on
    r = cli(home, project, "queue", "resume", sid, "--json", "--approve", "all", **extra)
    assert r.returncode == 0, r.stderr
    assert (project / "a.txt").read_text() == "x"
    ends = [e["status"] for e in json_events(r.stdout) if e["event"] == "run_end"]
    assert ends == ["completed", "completed"]
    assert json.loads(cli(home, project, "queue", "list", sid, "--json").stdout)["items"] == []
    assert len(fake_openai.requests) == 3


def test_exec_prompt_while_an_approval_waits_is_queued(home: Path, project: Path,
                                                       fake_openai: FakeOpenAI) -> None:
    fake_openai.add(tools([("call_1", "write_file", {"path": "b.txt", "content": "y"})]))
    extra = {"MTTUI_PROVIDER": "openai", "OPENAI_BASE_URL": fake_openai.url}
    first = cli(home, project, "exec", "write b", "--json", **extra)
    assert first.returncode == 3, first.stderr
    sid = json_events(first.stdout)[0]["session_id"]
    again = cli(home, project, "exec", "--session", sid, "and then this", "--json", **extra)
    assert again.returncode == 3 and "queued" in again.stderr
    assert len(fake_openai.requests) == 1  # not sent, not dropped: queued
    items = json.loads(cli(home, project, "queue", "list", sid, "--json").stdout)["items"]
    assert [(i["text"], i["state"]) for i in items] == [("and then this", "held")]
