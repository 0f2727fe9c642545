"""``mttui exec`` and a closed ssh session (SIGHUP), and a SIGKILLed ``exec``: the
unsandboxed tool never outlives mttui to write its effect after the run ended.

SIGHUP is handled like SIGTERM: the run stops, the tool's process group is killed,
the outcome is journaled, the exit code is 129."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mttui.session.service import SessionService
from tests.support.logs import records
from tests.support.resume import check, cli, env, json_events

TOOL = "echo $$ > tool.pid; sleep 3; echo late > effect.txt"


def _start(home: Path, project: Path) -> tuple[subprocess.Popen[str], list[dict[str, Any]]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mttui.cli", "exec", "--json", "--approval", "yolo", "!" + TOOL],
        cwd=project, env=env(home, MTTUI_SANDBOX="off", PYTHONFAULTHANDLER="1"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: list[dict[str, Any]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(json.loads(line))
        if seen[-1]["event"] == "tool_dispatch":
            break
    deadline = time.monotonic() + 20
    pid_file = project / "tool.pid"
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.05)
    return proc, seen


def _live_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (a killed child may wait a
    moment for init to reap it)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                rest = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(rest[2]) == pgid and rest[0] != b"Z":
            found.append(int(name))
    return found


def _gone(pgid: int) -> bool:
    deadline = time.monotonic() + 10
    while _live_members(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _no_late_effect(project: Path) -> None:
    """The tool would have written its effect 3 s after it started; wait past that."""
    time.sleep(4)
    assert not (project / "effect.txt").exists()


def test_sighup_stops_the_run_kills_the_tool_and_journals(home: Path, project: Path) -> None:
    proc, seen = _start(home, project)
    sid, call_id = seen[0]["session_id"], seen[-1]["call_id"]
    tool = int((project / "tool.pid").read_text())
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, err
    rest = json_events(out)
    assert {"event": "tool_outcome", "call_id": call_id, "status": "interrupted"} in rest
    assert rest[-1] == {"event": "exit", "session_id": sid, "code": 129}
    assert _gone(tool)  # the tool's whole process group
    log = records(SessionService(home, project).resolve(sid).path)
    outcomes = [(r["call_id"], r["status"]) for r in log if r["type"] == "tool_outcome"]
    assert outcomes == [(call_id, "interrupted")]
    assert [r["status"] for r in log if r["type"] == "run_end"] == ["stopped"]
    assert log[-1]["type"] == "session_end"
    plan = check(home, project, sid)  # nothing left open for resume to guess about
    assert "tool_interrupted" not in [w["code"] for w in plan["warnings"]]
    _no_late_effect(project)
    again = cli(home, project, "exec", "--resume", sid, "--json", MTTUI_SANDBOX="off")
    assert again.returncode == 0, again.stderr


def test_an_unsandboxed_tool_dies_with_a_killed_exec(home: Path, project: Path) -> None:
    proc, _ = _start(home, project)
    os.kill(proc.pid, signal.SIGKILL)  # mttui alone, no clean-up at all
    proc.communicate(timeout=30)
    _no_late_effect(project)
