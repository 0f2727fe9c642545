"""The runner: events and records of a turn, model errors, pairing, step limit, usage."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, error, hang, text, tools
from langchain_core.messages import AIMessage

from mttui.graph.events import MessageAdded, RunEnded, RunStarted, TextDelta, UsageUpdated
from mttui.session.reader import read_all


def _records(runner: Any, type_: str | None = None) -> list[dict[str, Any]]:
    recs, stats = read_all(runner.writer.path)
    assert stats.corrupt_lines == 0
    return [r for r in recs if type_ is None or r["type"] == type_]


def _end(events: list[Any]) -> RunEnded:
    return next(e for e in events if isinstance(e, RunEnded))


def test_importing_the_runner_does_not_load_langgraph() -> None:
    code = (
        "import mttui.graph.runner, mttui.graph.models, mttui.config, mttui.cli.exec, "
        "mttui.core.handle, mttui.core.drive, sys; "
        "bad = [m for m in sys.modules if m.startswith(('langgraph', 'langchain', 'textual'))]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_offline_turn_events_and_records(make_runner: Any) -> None:
    runner = make_runner()
    events = list(runner.run("hello there"))
    assert isinstance(events[0], RunStarted)
    assert isinstance(events[1], MessageAdded) and events[1].message["role"] == "user"
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5
    answer = [e.message for e in events if isinstance(e, MessageAdded)][-1]
    assert answer["role"] == "assistant" and answer["content"] == "".join(d.text for d in deltas)
    assert answer["id"].startswith("msg-") and {d.message_id for d in deltas} == {answer["id"]}
    assert answer["usage"]["input_tokens"] > 0 and answer["usage"]["output_tokens"] > 0
    assert _end(events).status == "completed"
    types = [r["type"] for r in _records(runner)]
    assert types == [
        "session_start",
        "run_start",
        "transcript_message",
        "transcript_message",
        "run_end",
    ]
    runner.end_session()
    end = _records(runner, "session_end")[0]
    assert end["stats"]["turns"] == 1 and end["stats"]["output_tokens"] > 0


def test_openai_turn_uses_provider_usage_or_estimates(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("first answer", usage=(123, 45)), text("second answer", usage=None))
    runner = make_runner("openai", url=fake_openai.url)
    first = list(runner.run("one"))
    usage = [e for e in first if isinstance(e, UsageUpdated)][0]
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (123, 45, False)
    second = list(runner.run("two"))
    est = [e for e in second if isinstance(e, UsageUpdated)][0]
    assert est.estimated and est.input_tokens > 0 and est.output_tokens > 0
    msg = [r["message"] for r in _records(runner, "transcript_message")][-1]
    assert msg["content"] == "second answer" and msg["usage"]["estimated"] is True
    # the model saw the whole conversation, with our system prompt first
    roles = [m["role"] for m in fake_openai.requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def _assert_error_then_recovery(runner: Any, fake_openai: FakeOpenAI, needle: str) -> None:
    events = list(runner.run("first"))
    end = _end(events)
    assert end.status == "error" and needle in (end.error or "")
    err = [r["message"] for r in _records(runner, "transcript_message")][-1]
    assert err["role"] == "assistant" and err["status"] == "error" and needle in err["content"]
    assert "Traceback" not in err["content"] and "\n" not in err["content"]
    ok = list(runner.run("second"))
    assert _end(ok).status == "completed"
    last_request = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in last_request] == ["system", "user", "user"]
    assert all(needle not in str(m.get("content")) for m in last_request)


def test_http_500_ends_the_run_and_the_session_stays_usable(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(error(500, "upstream exploded"), text("fine now"))
    runner = make_runner("openai", url=fake_openai.url)
    _assert_error_then_recovery(runner, fake_openai, "HTTP 500")


def test_timeout_ends_the_run(make_runner: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.add(hang(3), text("fine now"))
    runner = make_runner("openai", url=fake_openai.url, timeout=0.5)
    _assert_error_then_recovery(runner, fake_openai, "timed out")


def test_refused_connection_ends_the_run(
    make_runner: Any, fake_openai: FakeOpenAI, closed_port: str
) -> None:
    runner = make_runner("openai", url=closed_port)
    events = list(runner.run("anyone there?"))
    assert _end(events).status == "error" and "cannot reach the model server" in (
        _end(events).error or ""
    )
    # point the same session at a live server: it goes on
    fake_openai.add(text("here"))
    runner.close()
    again = make_runner("openai", url=fake_openai.url, writer=runner.writer)
    assert _end(list(again.run("now?"))).status == "completed"


def test_pairing_assertion_refuses_to_call_the_model(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("hi"))
    runner = make_runner("openai", url=fake_openai.url)
    list(runner.run("hello"))
    broken = AIMessage(
        "",
        id="msg-broken",
        tool_calls=[{"id": "call_open", "name": "shell", "args": {"command": "x"}}],
    )
    runner.graph.update_state(runner.config, {"messages": [broken]}, as_node="observation")
    before = len(fake_openai.requests)
    events = list(runner.run("again"))
    end = _end(events)
    assert end.status == "error" and "do not pair up" in (end.error or "")
    assert "call_open" in (end.error or "")
    assert len(fake_openai.requests) == before  # no model call was made
    state = runner.graph.get_state(runner.config)
    assert not [m for m in state.values["messages"] if m.type == "tool"]  # not silently fixed


def test_step_limit_per_run_is_reset_by_new_input(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    (project / "a.txt").write_text("a")
    looping = [tools([(f"call_{i}", "read_file", {"path": "a.txt"})]) for i in range(3)]
    fake_openai.add(*looping, text("stopped looping"), text("ok"))
    runner = make_runner("openai", url=fake_openai.url, max_steps_per_run=3)
    end = _end(list(runner.run("loop")))
    assert end.status == "error" and "step limit" in (end.error or "")
    assert len(fake_openai.requests) == 3
    state = runner.graph.get_state(runner.config)
    assert state.next == ()
    assert _end(list(runner.run("next"))).status == "completed"  # counter reset
