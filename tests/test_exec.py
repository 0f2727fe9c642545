"""``mttui exec`` in real subprocesses: exit codes, JSON lines, approvals across processes,
signals, and the API key never reaching the data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, slow, text, tools
from tests.support.logs import records
from tests.support.resume import cli, env, json_events

KEY_MARKER = "sk-UNIQUE-marker-7f3a9c-never-store-me"


def _env(home: Path, **extra: str) -> dict[str, str]:
    return env(home, PYTHONFAULTHANDLER="1", **extra)  # a hang in a signal test dumps its stacks


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "mttui.cli", "exec", *args]


def _exec(home: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return cli(home, project, "exec", *args, PYTHONFAULTHANDLER="1", **env)


def _log(home: Path, project: Path, session_id: str) -> list[dict[str, Any]]:
    return records(SessionService(home, project).resolve(session_id).path)


def _open_calls(home: Path, project: Path, session_id: str) -> list[Any]:
    """Open tool calls in the session's checkpoint, read with the real runner."""
    from mttui.config import load_settings
    from mttui.graph.repair import open_tool_calls
    from mttui.graph.runner import Runner

    service = SessionService(home, project)
    writer = service.open_session(service.resolve(session_id).path)
    try:
        runner = Runner(
            writer,
            load_settings({"provider": "offline"}),
            checkpoints_path=service.checkpoints_path(),
            project=project,
        )
        state = runner.graph.get_state(runner.config)
        assert state.next == ()
        calls = open_tool_calls(list(state.values["messages"]))
        runner.close()
        return calls
    finally:
        writer.close()


def test_offline_exec_needs_no_network_and_no_key(home: Path, project: Path) -> None:
    r = _exec(home, project, "--provider", "offline", "--json", "hello offline")
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    assert [e["event"] for e in events] == [
        "session",
        "run_start",
        "message",
        "message",
        "run_end",
        "exit",
    ]
    assert events[3]["message"]["role"] == "assistant" and events[4]["status"] == "completed"
    assert events[-1] == {"event": "exit", "session_id": events[0]["session_id"], "code": 0}
    assert Path(events[0]["path"]).exists()
    log = _log(home, project, events[0]["session_id"])
    assert log[-1]["type"] == "session_end" and log[-1]["stats"]["turns"] == 1
    human = _exec(home, project, "--continue", "plain text please")
    assert human.returncode == 0 and "## Offline answer" in human.stdout
    assert not [r for r in _log(home, project, "last") if r["type"] == "session_update"]
    switched = _exec(home, project, "--continue", "--model", "offline-2", "again")
    assert switched.returncode == 0
    updates = [r for r in _log(home, project, "last") if r["type"] == "session_update"]
    assert [(u["provider"], u["model"]) for u in updates] == [("offline", "offline-2")]
    usage = _exec(home, project)
    assert usage.returncode == 2 and "PROMPT" in usage.stderr
    assert _exec(home, project, "--session", "ffffffffffff", "x").returncode == 5


def test_pending_approval_crosses_processes(home: Path, project: Path) -> None:
    first = _exec(home, project, "--json", "!echo crossed > crossed.txt")
    assert first.returncode == 3, first.stderr
    events = json_events(first.stdout)
    request = next(e for e in events if e["event"] == "approval_request")
    assert events[-2] == {
        "event": "run_end",
        "run_id": request["run_id"],
        "status": "awaiting_approval",
    }
    assert not (project / "crossed.txt").exists()
    sid = events[0]["session_id"]
    second = _exec(home, project, "--resume", sid, "--approve", "all", "--json")
    assert second.returncode == 0, second.stderr
    later = json_events(second.stdout)
    names = [e["event"] for e in later]
    assert names[:3] == ["session", "resumed", "approval_request"]
    assert later[2]["request_id"] == request["request_id"]
    decision = next(e for e in later if e["event"] == "approval_decision")
    assert decision["request_id"] == request["request_id"]
    assert names.index("tool_dispatch") < names.index("tool_outcome") < names.index("run_end")
    assert (project / "crossed.txt").read_text() == "crossed\n"
    log = _log(home, project, sid)
    assert [r["request_id"] for r in log if r["type"] == "approval_request"] == [
        request["request_id"]
    ]
    # --approve none on a new request denies it; the prompt after it is sent as well
    third = _exec(home, project, "--session", sid, "--approve", "none", "!touch no.txt")
    assert third.returncode == 0, third.stderr
    assert "denied" in third.stdout and not (project / "no.txt").exists()


def test_locked_session_exits_4(home: Path, project: Path) -> None:
    r = _exec(home, project, "--json", "hi")
    sid = json_events(r.stdout)[0]["session_id"]
    service = SessionService(home, project)
    with service.open_session(service.resolve(sid).path):
        locked = _exec(home, project, "--session", sid, "again")
    assert locked.returncode == 4 and "open for writing" in locked.stderr
    assert "Traceback" not in locked.stderr


def _finish(proc: subprocess.Popen[str], timeout: float = 30) -> tuple[str, str]:
    """``communicate`` that, on a hang, dumps every thread's stack (faulthandler) first."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=30)
        raise AssertionError(f"no exit after the signal\n{out[-2000:]}\n{err[-8000:]}") from None


def _wait_for(proc: subprocess.Popen[str], event: str) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(json.loads(line))
        if seen[-1]["event"] == event:
            return seen
    raise AssertionError(f"no {event} event: {seen}")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_a_tool(home: Path, project: Path, sig: int, code: int) -> None:
    proc = subprocess.Popen(
        _cmd("--json", "--approval", "yolo", "!sleep 30"),
        cwd=project,
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = _wait_for(proc, "tool_dispatch")
    sid = seen[0]["session_id"]
    log_now = _log(home, project, sid)
    assert log_now[-1]["type"] == "tool_dispatch"  # on disk before the event was printed
    proc.send_signal(sig)
    out, err = _finish(proc)
    assert proc.returncode == code, err
    rest = json_events(out)
    assert {
        "event": "tool_outcome",
        "call_id": seen[-1]["call_id"],
        "status": "interrupted",
    } in rest
    assert rest[-1] == {"event": "exit", "session_id": sid, "code": code}
    log = _log(home, project, sid)
    assert [r["status"] for r in log if r["type"] == "run_end"] == ["stopped"]
    assert log[-1]["type"] == "session_end"
    assert _open_calls(home, project, sid) == []


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_a_stream(
    home: Path, project: Path, fake_openai: FakeOpenAI, sig: int, code: int
) -> None:
    fake_openai.add(slow(" ".join(f"w{i}" for i in range(400)), delay=0.05, pieces=400))
    env = _env(home, OPENAI_BASE_URL=fake_openai.url, OPENAI_API_KEY="sk-test")
    proc = subprocess.Popen(
        _cmd("--json", "stream please"),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sid = _wait_for(proc, "run_start")[0]["session_id"]
    deadline = time.monotonic() + 30
    while not fake_openai.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let some chunks arrive
    proc.send_signal(sig)
    out, err = _finish(proc)
    assert proc.returncode == code, err
    log = _log(home, project, sid)
    answer = [r["message"] for r in log if r["type"] == "transcript_message"][-1]
    assert answer["role"] == "assistant" and answer["status"] == "interrupted"
    assert answer["content"].startswith("w0")
    assert [r["status"] for r in log if r["type"] == "run_end"] == ["stopped"]
    assert json_events(out)[-1]["code"] == code
    assert _open_calls(home, project, sid) == []


def test_api_key_never_reaches_the_data_directory(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(
        tools([("call_1", "shell", {"command": "echo key=$OPENAI_API_KEY"})]),
        text("done"),
    )
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": KEY_MARKER}
    r = _exec(home, project, "--json", "--approve", "all", "use the key", **env)
    assert r.returncode == 0, r.stderr
    assert fake_openai.headers[0]["authorization"] == f"Bearer {KEY_MARKER}"  # it was used
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "checkpoints.sqlite" for p in files)
    assert any(p.suffix == ".jsonl" for p in files)
    for path in files:
        assert KEY_MARKER.encode() not in path.read_bytes(), path
    assert KEY_MARKER not in r.stdout and KEY_MARKER not in r.stderr


def test_kill_9_during_a_tool_then_resume_never_reruns_it(home: Path, project: Path) -> None:
    cmd = "echo $$ > tool.pid; echo ran >> runs.txt; sleep 30"
    proc = subprocess.Popen(
        _cmd("--json", "--approval", "yolo", "!" + cmd),
        cwd=project,
        env=_env(home, MTTUI_SANDBOX="off"),  # the tool's pid is the host's (killed below)
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen = _wait_for(proc, "tool_dispatch")
    sid, call_id = seen[0]["session_id"], seen[-1]["call_id"]
    deadline = time.monotonic() + 10
    runs = project / "runs.txt"  # the shell creates it before echo writes into it
    while not (runs.exists() and runs.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # no clean-up at all
    os.killpg(int((project / "tool.pid").read_text()), signal.SIGKILL)  # the tool's own group
    proc.communicate(timeout=10)
    r = _exec(home, project, "--resume", sid, "--json")
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    resumed = next(e for e in events if e["event"] == "resumed")
    assert [w["code"] for w in resumed["warnings"]] == ["tool_interrupted"]
    assert resumed["warnings"][0]["ids"] == [call_id]
    log = _log(home, project, sid)
    outcome = [x for x in log if x["type"] == "tool_outcome"]
    assert [(x["call_id"], x["status"]) for x in outcome] == [(call_id, "interrupted")]
    assert (project / "runs.txt").read_text() == "ran\n"  # never run again
    assert _open_calls(home, project, sid) == []
    again = _exec(home, project, "--session", sid, "--json", "what happened?")
    assert again.returncode == 0, again.stderr
    assert (project / "runs.txt").read_text() == "ran\n"
