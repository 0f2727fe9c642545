"""Two checkpoints per tool step, as in a bare ReAct agent (B14): the answer with the
decisions on its calls, then the results with the step observed. Compression and the
approval get a step of their own only when they have something to do, and an answer
put on the thread from outside still has its calls decided before they run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from mttui.graph.events import ApprovalRequested, RunEnded
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The metadata ``source``/``step`` of every checkpoint put, in order."""
    seen: list[str] = []
    put = SqliteSaver.put

    def counted(self: Any, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        seen.append(str((metadata or {}).get("source")))
        return put(self, config, checkpoint, metadata, versions)

    monkeypatch.setattr(SqliteSaver, "put", counted)
    yield seen


def _loop(server: FakeOpenAI, project: Path, n: int) -> None:
    for i in range(n):
        (project / f"m{i}.txt").write_text(f"module {i}\n")
        server.add(tools([(f"call_{i}", "read_file", {"path": f"m{i}.txt"})]))
    server.add(text("all read"))


def test_a_tool_step_is_two_checkpoints(make_runner: Any, fake_openai: FakeOpenAI,
                                        project: Path, steps: list[str]) -> None:
    runner = make_runner("openai", url=fake_openai.url)
    _loop(fake_openai, project, 6)
    events = list(runner.run("read every module"))
    assert events[-1].status == "completed"
    # the input and its __start__ step, then per tool step: reasoning + tool_execution;
    # then the final answer
    assert steps.count("loop") == 1 + 2 * 6 + 1, steps
    assert steps.count("input") == 1
    state = runner.graph.get_state(runner.config)
    assert state.next == ()
    done = state.values["completed_tool_calls"]
    assert [c["call_id"] for c in done] == [f"call_{i}" for i in range(6)]
    assert all(c == {"call_id": c["call_id"], "tool_name": "read_file", "status": "success"}
               for c in done)  # fmt: skip
    assert state.values["pending_tool_calls"] == []
    assert len(records(runner.writer.path, "tool_outcome")) == 6


def test_compression_gets_a_step_only_when_it_compresses(
        make_runner: Any, fake_openai: FakeOpenAI, project: Path, steps: list[str]) -> None:
    runner = make_runner("openai", url=fake_openai.url, token_limit=1200)
    for i in range(6):
        (project / f"m{i}.txt").write_text(f"line {i} of a module\n" * 12)
        fake_openai.add(tools([(f"call_{i}", "read_file", {"path": f"m{i}.txt"})]))
    fake_openai.add(text("the summary"), text("all read"))
    events = list(runner.run("read every module"))
    assert events[-1].status == "completed"
    compressions = records(runner.writer.path, "compression")
    assert len(compressions) == 1
    # one more checkpoint than the plain loop: the compression's own
    assert steps.count("loop") == 1 + 2 * 6 + 1 + 1, steps


def test_a_call_needing_approval_waits_in_its_own_step(
        make_runner: Any, fake_openai: FakeOpenAI, project: Path) -> None:
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    fake_openai.add(tools([("call_w", "write_file", {"path": "a.txt", "content": "x"})]),
                    text("written"))
    events = list(runner.run("write a file"))
    request = next(e for e in events if isinstance(e, ApprovalRequested))
    assert events[-1].status == "awaiting_approval"
    state = runner.graph.get_state(runner.config)
    assert state.next == ("human_approval",)
    assert [e["status"] for e in state.values["pending_tool_calls"]] == ["awaiting_approval"]
    events = list(runner.answer_approval(request.request_id, {"call_w": "approve"}))
    assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
    assert (project / "a.txt").read_text() == "x"


def test_an_answer_put_on_the_thread_is_routed_before_it_runs(
        make_runner: Any, fake_openai: FakeOpenAI, project: Path) -> None:
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    fake_openai.add(text("hello"))
    list(runner.run("hi"))
    ai = AIMessage(content="", id="msg-outside", tool_calls=[
        {"id": "call_o", "name": "write_file", "args": {"path": "o.txt", "content": "o"}}])
    runner.graph.update_state(runner.config, {"messages": [ai]}, as_node="reasoning")
    assert runner.graph.get_state(runner.config).next == ("tool_routing",)
    fake_openai.add(text("done"))
    events = list(runner.continue_run())
    assert any(isinstance(e, ApprovalRequested) for e in events)  # asked, not run
    assert not (project / "o.txt").exists()
