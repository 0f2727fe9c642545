"""``mttui ledger``: a call killed mid-run is listed as interrupted; settling it tells the
model once, on its next turn (a real SIGKILL at the dispatch, the scripted server)."""

from __future__ import annotations

import json
from pathlib import Path

from mttui.session.service import SessionService
from tests.support import zygote
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.resume import cli, env
from tests.support.timetravel import run_json


def test_an_interrupted_call_is_settled_and_the_model_is_told(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(tools([("k1", "shell", {"command": "echo hi > hi.txt"})]))
    keys = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    proc = zygote.run("fault", ["exec", "--approve", "all", "make hi"], cwd=project,
                      env=env(home, MTTUI_FAULT="after:tool_dispatch", **keys))
    assert proc.returncode == -9
    sid = SessionService(home, project).resolve("last").id
    listed = run_json(home, project, "ledger", sid)
    assert [(c["call_id"], c["state"], c["tool_name"]) for c in listed["calls"]] == [
        ("k1", "interrupted", "shell")]
    assert listed["calls"][0]["arguments"] == {"command": "echo hi > hi.txt"}
    assert listed["calls"][0]["run_id"]
    bad = cli(home, project, "ledger", sid, "nope", "mark-done")
    assert bad.returncode == 1 and "not an interrupted tool call" in bad.stderr
    fake_openai.add(text("resumed"))
    r = cli(home, project, "exec", "--resume", sid, "--approve", "all", **keys)
    assert r.returncode == 0, r.stderr
    done = run_json(home, project, "ledger", sid, "k1", "mark-done", "--note", "file is there")
    assert done["call"]["state"] == "done"
    again = cli(home, project, "ledger", sid, "k1", "mark-failed")
    assert again.returncode == 1 and "already settled" in again.stderr
    assert [c["state"] for c in run_json(home, project, "ledger", sid)["calls"]] == ["done"]
    log = records(SessionService(home, project).resolve(sid).path)
    res = [r for r in log if r["type"] == "tool_resolution"]
    assert res == [{**res[0], "call_id": "k1", "resolution": "done", "note": "file is there"}]
    fake_openai.requests.clear()
    fake_openai.add(text("noted"))
    r = cli(home, project, "exec", "--session", sid, "--approve", "all", "next", **keys)
    assert r.returncode == 0, r.stderr
    notes = [m["content"] for m in fake_openai.requests[0]["messages"]
             if m["role"] == "system" and "k1" in str(m["content"])]
    assert len(notes) == 1 and "did run" in notes[0] and "file is there" in notes[0]
    assert not (project / "hi.txt").exists() or (project / "hi.txt").read_text() == "hi\n"
    dispatches = [r for r in records(SessionService(home, project).resolve(sid).path)
                  if r["type"] == "tool_dispatch"]
    assert len(dispatches) == 1  # never run again


def test_rerun_asks_again_and_runs_a_new_call(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(tools([("k2", "shell", {"command": "echo hi >> hi.txt"})]))
    keys = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    proc = zygote.run("fault", ["exec", "--approve", "all", "make hi"], cwd=project,
                      env=env(home, MTTUI_FAULT="after:tool_dispatch", **keys))
    assert proc.returncode == -9
    sid = SessionService(home, project).resolve("last").id
    assert [c["call_id"] for c in run_json(home, project, "ledger", sid)["calls"]] == ["k2"]
    asked = cli(home, project, "ledger", sid, "k2", "rerun", "--json", **keys)
    assert asked.returncode == 3, asked.stderr  # --approve ask: the new call waits
    events = [json.loads(line) for line in asked.stdout.splitlines()]
    request = next(e for e in events if e["event"] == "approval_request")
    (new,) = request["tool_calls"]
    assert new["call_id"] != "k2" and new["arguments"] == {"command": "echo hi >> hi.txt"}
    fake_openai.add(text("ran it again"))
    r = cli(home, project, "exec", "--resume", sid, "--approve", "all", **keys)
    assert r.returncode == 0, r.stderr
    calls = run_json(home, project, "ledger", sid)["calls"]
    assert [(c["call_id"], c["state"]) for c in calls] == [("k2", "rerun")]
    log = records(SessionService(home, project).resolve(sid).path)
    outcomes = {r["call_id"]: r["status"] for r in log if r["type"] == "tool_outcome"}
    assert outcomes[new["call_id"]] == "success" and outcomes["k2"] == "interrupted"
    decisions = [r for r in log if r["type"] == "approval_decision"]
    assert decisions[-1]["decisions"] == {new["call_id"]: "approve"}
