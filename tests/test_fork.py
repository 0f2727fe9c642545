"""``mttui fork``: a new session with the source's messages up to a point; the source
untouched; a point inside a tool batch moves back (real subprocesses, scripted server)."""

from __future__ import annotations

from pathlib import Path

from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.resume import check, cli
from tests.support.timetravel import run_json


def _exec(home: Path, project: Path, fake: FakeOpenAI, *args: str) -> None:
    r = cli(home, project, "exec", "--approve", "all", *args,
            OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test")
    assert r.returncode == 0, r.stderr


def test_fork_copies_up_to_seq_and_leaves_the_source_alone(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "a.txt").write_text("a\n")
    fake_openai.add(text("one back"),
                    tools([("r1", "read_file", {"path": "a.txt"})]), text("read it"),
                    text("three back"))
    _exec(home, project, fake_openai, "first")
    _exec(home, project, fake_openai, "--continue", "second")
    _exec(home, project, fake_openai, "--continue", "third")
    service = SessionService(home, project)
    source = service.resolve("last")
    raw = source.path.read_bytes()
    # seq 4 is the assistant message with the call, 5 its result: 4 splits the batch
    moved = run_json(home, project, "fork", source.id, "--at", "4")
    assert moved["forked_from"] == {"session_id": source.id, "seq": 3}
    assert moved["adjusted_from"] == 4 and moved["messages"] == 3
    fork = run_json(home, project, "fork", source.id, "--at", "6", "--title", "other way")
    assert fork["adjusted_from"] is None and fork["messages"] == 6
    log = records(service.resolve(fork["session_id"]).path)
    assert log[0]["forked_from"] == {"session_id": source.id, "seq": 6}
    src_ids = [r["message"]["id"] for r in records(source.path)
               if r["type"] == "transcript_message"]
    assert [r["message"]["id"] for r in log if r["type"] == "transcript_message"] == src_ids[:6]
    listed = {s["id"]: s for s in run_json(home, project, "sessions")["sessions"]}
    assert listed[fork["session_id"]]["forked_from"] == {"session_id": source.id, "seq": 6}
    assert listed[fork["session_id"]]["title"] == "other way"
    assert listed[moved["session_id"]]["title"].endswith("(fork)")
    assert listed[source.id]["forked_from"] is None
    assert check(home, project, fork["session_id"])["warnings"] == []
    fake_openai.requests.clear()
    fake_openai.add(text("on the fork"))
    _exec(home, project, fake_openai, "--session", fork["session_id"], "fork turn")
    sent = [m.get("content") for m in fake_openai.requests[0]["messages"]
            if m["role"] != "system"]
    assert sent[0] == "first" and sent[-1] == "fork turn" and "third" not in sent
    assert len(sent) == 7
    assert source.path.read_bytes() == raw
    hits = run_json(home, project, "search", "second")["hits"]
    assert {h["session_id"] for h in hits} == {source.id, moved["session_id"],
                                               fork["session_id"]}


def test_fork_refuses_a_point_that_does_not_exist(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("hi"))
    _exec(home, project, fake_openai, "only")
    r = cli(home, project, "fork", "last", "--at", "9")
    assert r.returncode == 2 and "no message 9" in r.stderr
    assert len(run_json(home, project, "sessions")["sessions"]) == 1
