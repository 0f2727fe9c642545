"""kill -9 at every boundary of a run, then ``resume-check`` and resume, in real processes.

A scripted OpenAI-compatible server answers; the session runs in ``mttui exec``
subprocesses, killed with SIGKILL by timing or at a named crash point
(``MTTUI_FAULT``, armed by the test entry point ``support/fault_entry.py``). For
every point: ``resume-check`` gives the expected mode and codes without changing
any file; resuming never runs a dispatched tool again (a marker file counts
executions); the model's next request answers every tool call; nothing shown as
sent is lost; the index equals a rebuild.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.crash import POINTS, World
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.logs import records
from tests.support.resume import (
    assert_every_call_answered,
    check,
    codes,
    index_equals_rebuild,
    recheck,
    request_text,
)


@pytest.mark.parametrize("point", list(POINTS))
def test_kill_9_then_resume(
    point: str, home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    crash, expected, executions = POINTS[point]
    w = World(home, project, fake_openai)
    sid = crash(w)
    ran_before, shown = w.runs(), list(w.shown)
    plan = check(home, project, sid)  # asserts that no file changed
    assert (plan["mode"], codes(plan)) == ("execution", expected), plan
    if point == "after_tool_outcome":
        assert plan["recovered_tool_calls"] == ["call_a"]
    if "approval" in point:
        requests = [r for r in records(_path(home, project, sid))
                    if r["type"] == "approval_request"]  # fmt: skip
        assert plan["pending_approval"]["request_id"] == requests[-1]["request_id"]
    if expected == ["tool_interrupted"]:
        assert plan["interrupted_tool_calls"] == ["call_a"]

    # resume (answering a pending approval) and send one more message
    if "approval" in point:
        fake_openai.add(text("the tool ran"))
    fake_openai.add(text("after the crash"))
    asked = len(fake_openai.requests)
    evs = w.run("--resume", sid, "--approve", "all", "what happened?")
    resumed = next(e for e in evs if e["event"] == "resumed")
    assert (resumed["mode"], [x["code"] for x in resumed["warnings"]]) == ("execution", expected)
    if point == "after_approval_decision":
        assert not [e for e in evs if e["event"] == "approval_request"]
        assert plan["decided_approval"] == plan["pending_approval"]["request_id"]
    elif "approval" in point:
        again = next(e for e in evs if e["event"] == "approval_request")
        assert again["request_id"] == plan["pending_approval"]["request_id"]
    assert w.runs() == executions and (ran_before == 0 or executions == ran_before)

    last = fake_openai.requests[-1]
    assert len(fake_openai.requests) > asked and "what happened?" in request_text(last)
    assert_every_call_answered(last)
    sent = request_text(last)
    log_ids = {r["message"]["id"] for r in records(_path(home, project, sid))
               if r["type"] == "transcript_message"}  # fmt: skip
    for msg in shown:  # what the crashed processes printed as sent
        assert msg["id"] in log_ids
        assert msg["role"] == "tool" or str(msg["content"]) in sent
    if point == "after_tool_outcome":
        assert "done-once" in sent  # the real result, not an "interrupted" placeholder
    index_equals_rebuild(home, tmp_path)
    # resumed: nothing is left to close, and a second check says so
    after = recheck(home, project, sid)
    assert (after["mode"], codes(after)) == ("execution", []), after


def _path(home: Path, project: Path, sid: str) -> Path:
    return next((home / "history").glob(f"*/session-*-{sid}.jsonl"))
