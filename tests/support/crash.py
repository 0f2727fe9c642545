"""Crash points of a run in ``mttui exec`` subprocesses, for the kill -9 tests.

Each point makes a session crash there (SIGKILL by timing, or at a named point via
``MTTUI_FAULT``, armed by the test entry point ``fault_entry.py``) and returns its
id; ``POINTS`` maps a point to its crash, the expected resume codes and the tool
executions after the resume.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from tests.support import zygote
from tests.support.fake_openai import FakeOpenAI, slow, tools
from tests.support.resume import env, json_events

FAULT_ENTRY = Path(__file__).with_name("fault_entry.py")
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
        evs = json_events(out)
        self.shown += [e["message"] for e in evs
                       if e["event"] == "message" and e["message"]["status"] == "sent"]
        return evs

    def run(self, *args: str, code: int = 0, **extra: str) -> list[dict[str, Any]]:
        """Run to the end (or its crash point) in a process forked warm (``zygote``)."""
        done = zygote.run("fault", ["exec", "--json", *args], cwd=self.project,
                          env=self.env(**extra))
        assert done.returncode == code, done.stderr
        evs = json_events(done.stdout)
        self.shown += [e["message"] for e in evs
                       if e["event"] == "message" and e["message"]["status"] == "sent"]
        return evs

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
    proc = w.start("--approval", "yolo", "run the marker", MTTUI_SANDBOX="off")  # host pids
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


def parallel_call_crash(runner: Any) -> tuple[str, str]:
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
