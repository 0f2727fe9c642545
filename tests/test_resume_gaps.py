"""Resume after a kill -9 at every boundary of a turn (issue 11, items 5, 6, 13, 14).

The session runs in ``mttui exec`` subprocesses that SIGKILL themselves right after
their N-th durable write (a log append, a checkpoint, a checkpoint's pending writes:
``support/crash_loop.py``), so every boundary of a turn is hit, including the one
between the ``__start__`` writes of a new turn and its first step's checkpoint.
After each kill the session is resumed with one more message: the model's next
request carries every user message of the transcript, every tool call answered;
the tool ran at most once; a check after the resume finds the thread and the log in
line; the index equals a rebuild.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mttui.session.paths import Layout
from tests.support.crash_loop import (
    request_user_texts,
    run,
    user_texts_since_compression,
)
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records as log_records
from tests.support.resume import (
    assert_every_call_answered,
    cli,
    codes,
    index_equals_rebuild,
    recheck,
)
from tests.support.resume import (
    json_events as events,
)

LINE = "echo line >> lines.txt"
# durable writes of a resumed tool turn: session_resumed, run_start+message, the input
# checkpoint, the __start__ writes, … , run_end (then session_end); two checkpoints per
# tool step (reasoning, tool_execution), as in a bare ReAct agent
TOOL_TURN_POINTS = 17


def _log(home: Path, sid: str) -> Path:
    return next((home / "history").glob(f"*/session-*-{sid}.jsonl"))


def _lines(project: Path) -> int:
    f = project / "lines.txt"
    return len(f.read_text().splitlines()) if f.exists() else 0


def _dispatches(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r["type"] == "tool_dispatch")


def _first_turn(home: Path, project: Path, fake: FakeOpenAI) -> str:
    fake.add(text("one"))
    code, out, err = run(home, project, fake.url, "--approval", "yolo", "first words")
    assert code == 0, err
    return str(events(out)[0]["session_id"])


def _resume_and_check(home: Path, project: Path, fake: FakeOpenAI, sid: str,
                      tmp: Path) -> dict[str, Any]:
    """Resume with one more message and check everything the issue asks for."""
    fake.script.clear()
    fake.add(text("three"))
    asked = len(fake.requests)
    code, out, err = run(home, project, fake.url, "--approval", "yolo", "--session", sid,
                         "third words")  # fmt: skip
    assert code == 0, err
    assert len(fake.requests) > asked
    last = fake.requests[-1]
    records = log_records(_log(home, sid))
    sent = request_user_texts(last)
    for said in user_texts_since_compression(records):
        assert said in sent, (said, last["messages"])
    assert_every_call_answered(last)
    assert _lines(project) <= _dispatches(records) <= 1  # never run twice
    after = recheck(home, project, sid)
    assert "history_length_mismatch" not in codes(after), after
    assert (after["mode"], codes(after)) == ("execution", []), after
    index_equals_rebuild(home, tmp)
    return after


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAI
         ) -> tuple[Path, Path, str]:
    """A data home with one finished turn (copied for each crash) and its project."""
    root = tmp_path_factory.mktemp("base")
    (root / "project").mkdir()
    sid = _first_turn(root / "home", root / "project", server)
    return root / "home", root / "project", sid


@pytest.mark.parametrize("point", range(1, TOOL_TURN_POINTS + 1))
def test_kill_at_every_boundary_of_a_tool_turn(
    point: int, base: tuple[Path, Path, str], server: FakeOpenAI, tmp_path: Path
) -> None:
    src, project, sid = base
    home = tmp_path / "home"
    shutil.copytree(src, home)
    (project / "lines.txt").unlink(missing_ok=True)
    server.script.clear()
    server.add(tools([("call_l", "shell", {"command": LINE})]), text("two"))
    code, _, err = run(home, project, server.url, "--approval", "yolo", "--session", sid,
                       "second words", MTTUI_CRASH_AT=str(point))  # fmt: skip
    assert code == -9, f"no write {point} in the turn: {err}"
    _resume_and_check(home, project, server, sid, tmp_path)


@pytest.mark.parametrize("point", [2, 3, 4, 5, 8, 9])
def test_kill_in_the_first_turn(
    point: int, home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """The first turn of a new session (no checkpoint before it)."""
    fake_openai.add(text("one"))
    code, out, err = run(home, project, fake_openai.url, "first words",
                         MTTUI_CRASH_AT=str(point))  # fmt: skip
    assert code == -9, err
    sid = str(events(out)[0]["session_id"])
    fake_openai.script.clear()
    fake_openai.add(text("three"))
    code, out, err = run(home, project, fake_openai.url, "--session", sid, "third words")
    assert code == 0, err
    sent = request_user_texts(fake_openai.requests[-1])
    assert "first words" in sent and "third words" in sent
    after = recheck(home, project, sid)
    assert "history_length_mismatch" not in codes(after), after
    index_equals_rebuild(home, tmp_path)
    assert Layout(home).index_path.exists()


@pytest.mark.parametrize("fault", ["after:run_start", "after:transcript_message",
                                   "before:checkpoint:input", "after:checkpoint:input"])
def test_a_prompt_never_vanishes(
    fault: str, base: tuple[Path, Path, str], server: FakeOpenAI, tmp_path: Path
) -> None:
    """Item 5: killed between the prompt's log record and the step's checkpoint (also
    between the ``__start__`` writes and the first step checkpoint), the prompt is
    added back to the thread on resume; the check before the resume says so and the
    one after it is clean."""
    src, project, sid = base
    home = tmp_path / "home"
    shutil.copytree(src, home)
    (project / "lines.txt").unlink(missing_ok=True)
    server.script.clear()
    code, _, err = run(home, project, server.url, "--session", sid, "second words",
                       MTTUI_FAULT=fault)  # fmt: skip
    assert code == -9, err
    before = recheck(home, project, sid)
    after = _resume_and_check(home, project, server, sid, tmp_path)
    if "history_length_mismatch" in codes(before):  # said before, repaired by the resume
        assert before.get("restored_messages"), before
    assert after["restored_messages"] == []


def test_a_session_killed_after_session_start_continues(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """Item 6: killed right after ``session_start``, the session is not ``session_empty``
    forever: the check finds nothing to restore, ``exec --session`` continues it, and
    ``doctor`` has nothing to report."""
    code, _, err = run(home, project, fake_openai.url, "first words", MTTUI_CRASH_AT="1")
    assert code == -9, err
    [path] = (home / "history").glob("*/session-*.jsonl")
    assert [r["type"] for r in log_records(path)] == ["session_start"]
    sid = str(log_records(path)[0]["session_id"])
    plan = recheck(home, project, sid)
    assert (plan["mode"], plan["refusal"], codes(plan)) == ("execution", None, [])
    fake_openai.add(text("hello"))
    code, out, err = run(home, project, fake_openai.url, "--session", sid, "now it works")
    assert code == 0, err
    assert "now it works" in request_user_texts(fake_openai.requests[-1])
    doctor = cli(home, project, "doctor", "--json")
    assert json.loads(doctor.stdout)["problems"] == [], doctor.stdout
    index_equals_rebuild(home, tmp_path)


def test_a_thread_whose_results_do_not_pair_up_is_repaired(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """Item 13: a thread left with a tool result that answers no call (and a call with
    no result), as older crashes left them, is repaired by the resume instead of
    refused: the next request pairs every call with its result."""
    from langchain_core.messages import AIMessage, ToolMessage

    from mttui.graph.agent import build_graph
    from mttui.graph.checkpoints import open_saver
    from mttui.graph.context import GraphContext
    from mttui.session.paths import project_hash

    fake_openai.add(text("one"))
    code, out, err = run(home, project, fake_openai.url, "first words")
    assert code == 0, err
    sid = str(events(out)[0]["session_id"])
    thread = next(r for r in log_records(_log(home, sid)) if r["type"] == "session_start")
    saver = open_saver(Layout(home).checkpoints_path(project_hash(project)))
    try:
        ctx = GraphContext(model=None, project=project, journal=None, system_prompt="")
        graph = build_graph(ctx, saver)
        config: Any = {"configurable": {"thread_id": thread["thread_id"]}}
        broken = [ToolMessage(content="stray", tool_call_id="call_10_0", id="m-stray"),
                  AIMessage(content="", id="m-open", tool_calls=[
                      {"id": "call_11_0", "name": "shell", "args": {"command": "true"}}])]
        graph.update_state(config, {"messages": broken}, as_node="observation")
    finally:
        saver.conn.close()
    fake_openai.add(text("two"))
    code, out, err = run(home, project, fake_openai.url, "--session", sid, "again")
    assert code == 0, err
    last = fake_openai.requests[-1]
    assert_every_call_answered(last)
    assert "call_10_0" not in json.dumps(last["messages"])
    assert "first words" in request_user_texts(last) and "again" in request_user_texts(last)
    after = recheck(home, project, sid)  # (the injected call was never in the log)
    assert (after["mode"], codes(after)) == ("execution", ["transcript_incomplete"]), after


def test_a_decided_approval_is_applied_not_asked_again(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """Item 14: killed after the ``approval_decision`` (approve) record but before the
    call's dispatch, the resume applies the logged decision: the call runs once, the
    approval is never asked again (even with ``--approve none``), and the decision is
    not recorded twice."""
    fake_openai.add(tools([("call_d", "shell", {"command": LINE})]))
    code, out, err = run(home, project, fake_openai.url, "add a line")
    assert code == 3, err  # waits for the approval
    sid = str(events(out)[0]["session_id"])
    code, _, err = run(home, project, fake_openai.url, "--resume", sid, "--approve", "all",
                       MTTUI_FAULT="after:approval_decision")  # fmt: skip
    assert code == -9 and _lines(project) == 0, err
    plan = recheck(home, project, sid)
    assert plan["decided_approval"] and "approval_pending" not in codes(plan), plan
    fake_openai.add(text("the line is there"), text("three"))
    code, out, err = run(home, project, fake_openai.url, "--session", sid, "--approve",
                         "none", "third words")  # fmt: skip
    assert code == 0, err
    evs = events(out)
    assert not [e for e in evs if e["event"] == "approval_request"], evs
    records = log_records(_log(home, sid))
    assert _lines(project) == 1 == _dispatches(records)
    assert sum(r["type"] == "approval_decision" for r in records) == 1
    sent = request_user_texts(fake_openai.requests[-1])
    assert "add a line" in sent and "third words" in sent
    assert_every_call_answered(fake_openai.requests[-1])
    after = recheck(home, project, sid)
    assert (after["mode"], codes(after)) == ("execution", []), after
    index_equals_rebuild(home, tmp_path)


async def test_the_tui_applies_a_decided_approval_without_asking(
    home: Path, project: Path
) -> None:
    """Item 14 in the TUI: the log holds the decision (the process died before the call
    was dispatched); continuing the session runs the call without showing the approval
    again, then the new message."""
    from mttui.graph import events as ev
    from mttui.graph.runner import Runner
    from mttui.screens.chat import ChatScreen
    from mttui.session.service import SessionService
    from mttui.widgets.history import HistoryView
    from tests.support.tui import SIZE, make_app, send, settings, wait_for

    service = SessionService(home, project)
    writer = service.create_session(provider="offline", model="offline", title="Decided")
    runner = Runner.for_service(service, writer, settings())
    run_events = list(runner.run("!echo decided-run > decided.txt"))
    asked = next(e for e in run_events if isinstance(e, ev.ApprovalRequested))
    # what a SIGKILL right after the decision leaves: the record, nothing else
    writer.append("approval_decision", request_id=asked.request_id,
                  decisions={c["call_id"]: "approve" for c in asked.tool_calls})  # fmt: skip
    runner.close()
    writer.close()
    app = make_app(service, open_session=writer.session_id)
    shown: list[object] = []
    async with app.run_test(size=SIZE) as pilot:
        def idle() -> bool:
            screen = app.screen
            if isinstance(screen, ChatScreen) and screen.approval is not None:
                shown.append(screen.approval)  # an approval panel was shown
            return isinstance(screen, ChatScreen) and screen.state == "idle"

        await wait_for(pilot, idle)
        await send(pilot, "go on")
        await wait_for(pilot, lambda: idle() and (project / "decided.txt").exists()
                       and app.screen.query_one(HistoryView).find(
                           lambda it: it.kind == "user" and it.text == "go on") is not None)
        tool = app.screen.query_one(HistoryView).find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "success"
    assert shown == []
    records = service.records(writer.session_id)[0]
    assert sum(r["type"] == "approval_decision" for r in records) == 1
    assert sum(r["type"] == "tool_dispatch" for r in records) == 1


APPROVAL_TURN_POINTS = 15  # session_resumed, approval_decision, run_start, … , run_end


@pytest.fixture(scope="module")
def waiting(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAI
            ) -> tuple[Path, Path, str]:
    """A data home whose session waits for the approval of a shell call."""
    root = tmp_path_factory.mktemp("waiting")
    (root / "project").mkdir()
    server.script.clear()
    server.add(tools([("call_w", "shell", {"command": LINE})]))
    code, out, err = run(root / "home", root / "project", server.url, "add a line")
    assert code == 3, err
    return root / "home", root / "project", str(events(out)[0]["session_id"])


@pytest.mark.parametrize("point", range(1, APPROVAL_TURN_POINTS + 1))
def test_kill_at_every_boundary_of_an_approved_run(
    point: int, waiting: tuple[Path, Path, str], server: FakeOpenAI, tmp_path: Path
) -> None:
    """The run that an approval continues, killed at each of its durable writes: once
    the decision is in the log it is never asked again; the call runs at most once."""
    src, project, sid = waiting
    home = tmp_path / "home"
    shutil.copytree(src, home)
    (project / "lines.txt").unlink(missing_ok=True)
    server.script.clear()
    server.add(text("the line is there"))
    code, _, err = run(home, project, server.url, "--resume", sid, "--approve", "all",
                       MTTUI_CRASH_AT=str(point))  # fmt: skip
    assert code == -9, f"no write {point} in the run: {err}"
    crashed = log_records(_log(home, sid))
    decided = any(r["type"] == "approval_decision" for r in crashed)
    started = any(r["type"] == "tool_dispatch" for r in crashed)  # may have run: not again
    server.script.clear()
    server.add(text("the line is there"), text("three"))
    code, out, err = run(home, project, server.url, "--session", sid, "--approve", "none",
                         "third words")  # fmt: skip
    assert code == 0, err
    asked = [e for e in events(out) if e["event"] == "approval_request"]
    assert not (decided and asked), (point, asked)
    records = log_records(_log(home, sid))
    assert _lines(project) <= _dispatches(records) <= 1
    if decided and not started:
        assert _lines(project) == 1, point  # approved, never started: the run went on
    sent = request_user_texts(server.requests[-1])
    assert "add a line" in sent and "third words" in sent
    assert_every_call_answered(server.requests[-1])
    after = recheck(home, project, sid)
    assert (after["mode"], codes(after)) == ("execution", []), after
    index_equals_rebuild(home, tmp_path)
