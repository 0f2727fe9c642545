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

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, slow, text, tools
from resume_support import (
    assert_every_call_answered,
    check,
    codes,
    env,
    events,
    index_equals_rebuild,
    log_records,
    recheck,
    request_text,
)

FAULT_ENTRY = Path(__file__).parent / "support" / "fault_entry.py"
MARK = "echo ran >> runs.txt; echo done-once"
CALL = ("call_a", "shell", {"command": MARK})


class World:
    def __init__(self, home: Path, project: Path, fake: FakeOpenAI) -> None:
        self.home, self.project, self.fake = home, project, fake
        self.shown: list[dict[str, Any]] = []  # messages printed as sent, by any process

    def env(self, **extra: str) -> dict[str, str]:
        return env(self.home, OPENAI_BASE_URL=self.fake.url, OPENAI_API_KEY="sk-test", **extra)

    def start(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, str(FAULT_ENTRY), "exec", "--json", *args],
                                cwd=self.project, env=self.env(**extra), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)  # fmt: skip

    def finish(self, proc: subprocess.Popen[str], code: int) -> list[dict[str, Any]]:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        evs = events(out)
        self.shown += [e["message"] for e in evs
                       if e["event"] == "message" and e["message"]["status"] == "sent"]
        return evs

    def run(self, *args: str, code: int = 0, **extra: str) -> list[dict[str, Any]]:
        return self.finish(self.start(*args, **extra), code)

    def runs(self) -> int:
        marker = self.project / "runs.txt"
        return len(marker.read_text().splitlines()) if marker.exists() else 0

    def wait(self, what: Any, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not what():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.02)


def _before_dispatch(w: World) -> str:
    w.fake.add(tools([CALL]))
    evs = w.run("--approval", "yolo", "run the marker", code=-9, MTTUI_FAULT="before:tool_dispatch")
    return str(evs[0]["session_id"])


def _while_tool_runs(w: World) -> str:
    cmd = "echo $$ > tool.pid; echo ran >> runs.txt; sleep 30"
    w.fake.add(tools([("call_a", "shell", {"command": cmd})]))
    proc = w.start("--approval", "yolo", "run the marker")
    w.wait(lambda: w.runs() == 1 and (w.project / "tool.pid").exists())
    os.killpg(proc.pid, signal.SIGKILL)
    w.wait(lambda: bool((w.project / "tool.pid").read_text().strip()))
    os.killpg(int((w.project / "tool.pid").read_text()), signal.SIGKILL)
    return str(w.finish(proc, -9)[0]["session_id"])


def _after_outcome(w: World) -> str:
    w.fake.add(tools([CALL]))
    evs = w.run("--approval", "yolo", "run the marker", code=-9, MTTUI_FAULT="after:tool_outcome")
    return str(evs[0]["session_id"])


def _while_streaming(w: World) -> str:
    w.fake.add(slow(" ".join(f"w{i}" for i in range(400)), delay=0.05, pieces=400))
    proc = w.start("stream please")
    w.wait(lambda: len(w.fake.requests) == 1)
    time.sleep(0.4)  # some chunks are on screen
    os.killpg(proc.pid, signal.SIGKILL)
    return str(w.finish(proc, -9)[0]["session_id"])


def _awaiting_approval(w: World) -> str:
    w.fake.add(tools([CALL]))
    evs = w.run("run the marker", code=-9, MTTUI_FAULT="after:approval_request")
    return str(evs[0]["session_id"])


def _after_decision(w: World) -> str:
    w.fake.add(tools([CALL]))
    sid = str(w.run("run the marker", code=3)[0]["session_id"])
    w.run("--resume", sid, "--approve", "all", code=-9, MTTUI_FAULT="after:approval_decision")
    return sid


# point -> (crash, mode, codes, executions after the resume)
POINTS = {
    "before_tool_dispatch": (_before_dispatch, ["dangling_tool_call_closed"], 0),
    "while_the_tool_runs": (_while_tool_runs, ["tool_interrupted"], 1),
    "after_tool_outcome": (_after_outcome, ["dangling_tool_call_closed"], 1),
    "while_an_answer_streams": (_while_streaming, [], 0),
    "while_waiting_for_approval": (_awaiting_approval, ["approval_pending"], 1),
    "after_approval_decision": (_after_decision, [], 1),  # applied, never asked again
}


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
        requests = [r for r in log_records(_path(home, project, sid))
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
    log_ids = {r["message"]["id"] for r in log_records(_path(home, project, sid))
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
