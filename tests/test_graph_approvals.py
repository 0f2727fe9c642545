"""Approvals: approve, deny, mixed, modes, remembered tools, pending across runners."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mttui.graph.events import ApprovalRequested, RunEnded, ToolDispatched
from mttui.graph.runner import ApprovalPendingError, RunnerError
from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records


def _end(events: list[Any]) -> RunEnded:
    ends = [e for e in events if isinstance(e, RunEnded)]
    assert len(ends) == 1
    return ends[0]


def _request(events: list[Any]) -> ApprovalRequested:
    return next(e for e in events if isinstance(e, ApprovalRequested))


def _tool_texts(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_approve_runs_the_tool_and_journals_it(make_runner: Any, project: Path) -> None:
    runner = make_runner()
    first = list(runner.run("!echo approved > out.txt"))
    assert _end(first).status == "awaiting_approval"
    req = _request(first)
    assert req.tool_calls[0]["tool_name"] == "shell" and req.tool_calls[0]["risk_level"] == "high"
    assert not (project / "out.txt").exists()
    logged = records(runner.writer.path, "approval_request")
    assert [r["request_id"] for r in logged] == [req.request_id]
    call_id = req.tool_calls[0]["call_id"]
    second = list(runner.answer_approval(req.request_id, {call_id: "approve"}))
    assert _end(second).status == "completed"
    assert (project / "out.txt").read_text() == "approved\n"
    types = [r["type"] for r in records(runner.writer.path)]
    assert (
        types.index("approval_decision")
        < types.index("tool_dispatch")
        < types.index("tool_outcome")
    )
    decision = records(runner.writer.path, "approval_decision")[0]
    assert decision["request_id"] == req.request_id and decision["decisions"] == {
        call_id: "approve"
    }
    # transcript ids == checkpoint ids
    state = runner.graph.get_state(runner.config)
    ids = [m.id for m in state.values["messages"]]
    logged_ids = [r["message"]["id"] for r in records(runner.writer.path, "transcript_message")]
    assert ids == logged_ids


def test_deny_gives_the_model_a_denied_result(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    fake_openai.add(tools([("call_x", "shell", {"command": "touch pwned"})]), text("understood"))
    runner = make_runner("openai", url=fake_openai.url)
    req = _request(list(runner.run("do it")))
    events = list(runner.answer_approval(req.request_id, {"call_x": "deny"}, reason="not today"))
    assert _end(events).status == "completed"
    assert not (project / "pwned").exists()
    assert not records(runner.writer.path, "tool_dispatch")
    assert [r["status"] for r in records(runner.writer.path, "tool_outcome")] == ["denied"]
    seen = _tool_texts(fake_openai.requests[1])["call_x"]
    assert seen.startswith("denied") and "not today" in seen


def test_mixed_decisions_in_one_step(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    fake_openai.add(
        tools(
            [
                ("call_a", "shell", {"command": "touch a.txt"}),
                ("call_b", "write_file", {"path": "b.txt", "content": "b"}),
                ("call_c", "list_dir", {"path": "."}),
            ]
        ),
        text("done"),
    )
    runner = make_runner("openai", url=fake_openai.url)
    req = _request(list(runner.run("three things")))
    assert [c["call_id"] for c in req.tool_calls] == ["call_a", "call_b"]  # low risk never asks
    events = list(runner.answer_approval(req.request_id, {"call_a": "approve", "call_b": "deny"}))
    assert _end(events).status == "completed"
    assert (project / "a.txt").exists() and not (project / "b.txt").exists()
    outcomes = {r["call_id"]: r["status"] for r in records(runner.writer.path, "tool_outcome")}
    assert outcomes == {"call_a": "success", "call_b": "denied", "call_c": "success"}
    seen = _tool_texts(fake_openai.requests[1])
    assert seen["call_b"].startswith("denied") and "a.txt" in seen["call_c"]


def test_yolo_and_deny_modes(make_runner: Any, project: Path) -> None:
    yolo = make_runner(approval="yolo")
    events = list(yolo.run("!touch y.txt"))
    assert _end(events).status == "completed" and (project / "y.txt").exists()
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    deny = make_runner(approval="deny")
    events = list(deny.run("!touch d.txt\n/ls"))
    assert _end(events).status == "completed" and not (project / "d.txt").exists()
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    outcomes = [r["status"] for r in records(deny.writer.path, "tool_outcome")]
    assert outcomes == ["denied", "success"]


def test_auto_edit_asks_only_for_high_risk(make_runner: Any, project: Path) -> None:
    runner = make_runner(approval="auto-edit", sandbox="off")  # sandboxed, shell runs unasked
    assert _end(list(runner.run("/write w.txt hello"))).status == "completed"
    assert (project / "w.txt").read_text() == "hello\n"  # /write ends a file with a newline
    assert _end(list(runner.run("!echo hi"))).status == "awaiting_approval"


def test_allow_for_session_is_recorded_and_honoured(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner()
    req = _request(list(runner.run("!echo one")))
    cid = req.tool_calls[0]["call_id"]
    list(runner.answer_approval(req.request_id, {cid: "approve"}, remember=["shell"]))
    assert records(runner.writer.path, "approval_decision")[0]["remember"] == ["shell"]
    assert _end(list(runner.run("!echo two"))).status == "completed"
    # other tools still ask
    assert _end(list(runner.run("/write x.txt x"))).status == "awaiting_approval"
    path = runner.writer.path
    runner.close()
    runner.writer.close()
    # reopened in a new runner: derived from the log
    service = SessionService(home, project)
    again = make_runner(writer=service.open_session(path))
    pending = again.pending_approval()
    assert pending is not None and pending.asked_again
    list(again.answer_approval(pending.request_id, {pending.tool_calls[0]["call_id"]: "deny"}))
    events = list(again.run("!echo three"))
    assert _end(events).status == "completed"
    assert any(isinstance(e, ToolDispatched) for e in events)


def test_pending_approval_survives_a_new_runner(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner()
    req = _request(list(runner.run("!echo later > later.txt")))
    with pytest.raises(ApprovalPendingError):
        list(runner.run("something else"))
    path = runner.writer.path
    runner.close()
    runner.writer.close()
    other = make_runner(writer=SessionService(home, project).open_session(path))
    pending = other.pending_approval()
    assert pending is not None
    assert pending.request_id == req.request_id and pending.tool_calls == req.tool_calls
    with pytest.raises(RunnerError):
        list(other.answer_approval("apr-wrong", {}))
    with pytest.raises(RunnerError):
        list(other.answer_approval(req.request_id, {req.tool_calls[0]["call_id"]: "maybe"}))
    cid = req.tool_calls[0]["call_id"]
    assert _end(list(other.answer_approval(req.request_id, {cid: "approve"}))).status == (
        "completed"
    )
    assert (project / "later.txt").read_text() == "later\n"
    assert len(records(other.writer.path, "approval_request")) == 1  # asked again, not re-recorded
