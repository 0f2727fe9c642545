"""Stop: during a stream, during a tool, with calls left to run; never an open call."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mttui.graph.events import RunEnded, TextDelta, ToolDispatched
from mttui.graph.repair import open_tool_calls
from tests.support.fake_openai import FakeOpenAI, slow, text
from tests.support.logs import records


def _run_and_stop_on(runner: Any, prompt: str, trigger: type) -> list[Any]:
    events: list[Any] = []
    for event in runner.run(prompt):
        events.append(event)
        if isinstance(event, trigger) and not runner.stopping:
            # from another thread, as the UI does
            threading.Thread(target=runner.stop).start()
    return events


def _no_open_calls(runner: Any) -> None:
    state = runner.graph.get_state(runner.config)
    assert open_tool_calls(list(state.values["messages"])) == []
    assert state.next == ()


def test_stop_during_stream_keeps_the_partial_answer(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    fake_openai.add(slow(words, delay=0.05, pieces=200), text("after the stop"))
    runner = make_runner("openai", url=fake_openai.url)
    events = _run_and_stop_on(runner, "talk a lot", TextDelta)
    end = events[-1]
    assert isinstance(end, RunEnded) and end.status == "stopped"
    partial = [r["message"] for r in records(runner.writer.path, "transcript_message")][-1]
    assert partial["role"] == "assistant" and partial["status"] == "interrupted"
    assert partial["content"].startswith("word0") and len(partial["content"]) < len(words)
    state = runner.graph.get_state(runner.config)
    assert state.values["messages"][-1].id == partial["id"]
    assert state.values["messages"][-1].content == partial["content"]
    _no_open_calls(runner)
    assert records(runner.writer.path, "run_end")[-1]["status"] == "stopped"
    assert list(runner.run("go on"))[-1].status == "completed"


def test_stop_during_a_tool_interrupts_it_and_cancels_the_rest(
    make_runner: Any, project: Path
) -> None:
    runner = make_runner(approval="yolo", grace=0.3)
    events = _run_and_stop_on(runner, "!sleep 30\n!touch never.txt", ToolDispatched)
    assert events[-1].status == "stopped"
    assert not (project / "never.txt").exists()
    outcomes = [(r["call_id"], r["status"]) for r in records(runner.writer.path, "tool_outcome")]
    dispatched = [r["call_id"] for r in records(runner.writer.path, "tool_dispatch")]
    assert [s for _, s in outcomes] == ["interrupted", "cancelled"]
    assert dispatched == [outcomes[0][0]]  # the cancelled call never started
    _no_open_calls(runner)
    tool_msgs = [
        r["message"]
        for r in records(runner.writer.path, "transcript_message")
        if r["message"]["role"] == "tool"
    ]
    assert [m["tool_status"] for m in tool_msgs] == ["interrupted", "cancelled"]
    # stop never ends the session: the next turn runs (and the stop flag was reset)
    assert list(runner.run("!echo again"))[-1].status == "completed"


def test_a_finished_tool_keeps_its_result_when_stopped_within_grace(
    make_runner: Any, project: Path
) -> None:
    runner = make_runner(approval="yolo", grace=5.0)
    events = _run_and_stop_on(runner, "!sleep 0.3; echo done", ToolDispatched)
    assert events[-1].status == "stopped"
    assert [r["status"] for r in records(runner.writer.path, "tool_outcome")] == ["success"]
    _no_open_calls(runner)


def test_stop_before_the_model_call_makes_no_request(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    runner = make_runner("openai", url=fake_openai.url)
    events = runner.run("never asked")
    first = next(events)  # the run has started; the graph has not
    runner.stop()
    rest = list(events)
    assert type(first).__name__ == "RunStarted" and rest[-1].status == "stopped"
    assert fake_openai.requests == []
    _no_open_calls(runner)
    fake_openai.add(text("now"))
    assert list(runner.run("and now"))[-1].status == "completed"  # the flag was reset
