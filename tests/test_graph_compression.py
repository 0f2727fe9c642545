"""History compression: auto and manual, [summary, kept…], turn boundaries, failures."""

from __future__ import annotations

from typing import Any

from fake_openai import FakeOpenAI, error, text, tools

from mttui.graph.compression.auto import MAX_FAILURES
from mttui.graph.compression.cut import is_summary
from mttui.graph.events import Compressed, Notice, RunEnded
from mttui.session.reader import read_all

LONG = "please remember this detail about the parser module. " * 12  # ~650 chars


def _records(runner: Any, type_: str) -> list[dict[str, Any]]:
    return [r for r in read_all(runner.writer.path)[0] if r["type"] == type_]


def _view(runner: Any) -> list[Any]:
    return list(runner.graph.get_state(runner.config).values["messages"])


def test_auto_compression_keeps_summary_first_and_whole_turns(make_runner: Any) -> None:
    runner = make_runner(approval="yolo", token_limit=3000, compression_threshold=0.5)
    compressed: list[Compressed] = []
    for i in range(8):
        prompt = f"!echo turn {i}" if i % 2 else f"turn {i}: {LONG}"
        events = list(runner.run(prompt))
        assert events[-1].status == "completed"
        compressed += [e for e in events if isinstance(e, Compressed)]
    assert compressed, "the token limit was exceeded but nothing was compressed"
    rec = _records(runner, "compression")[-1]
    assert rec["trigger"] == "auto" and rec["summary"].startswith("<compressed_snapshot>")
    assert rec["tokens_after"] < rec["tokens_before"] and rec["removed_count"] > 0
    view = _view(runner)
    assert is_summary(view[0]) and "<compressed_snapshot>" in view[0].content
    assert not any(is_summary(m) for m in view[1:])
    assert view[1].type == "human"  # the kept part starts at a turn, never with a tool result
    humans = [m for m in view if m.type == "human" and not is_summary(m)]
    assert humans[-1].content == "!echo turn 7"  # the latest request, verbatim
    # transcript untouched: every message of every turn is still in the log
    logged = [r["message"] for r in _records(runner, "transcript_message")]
    assert sum(1 for m in logged if m["role"] == "user") == 8
    kept_ids = [m.id for m in view[1 : 1 + rec["kept_count"]]]
    if len(compressed) == 1:
        assert kept_ids == rec["kept_message_ids"]


def test_compression_uses_the_estimate_when_the_server_sends_no_usage(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(
        text("short answer one", usage=None),
        tools([("call_1", "list_dir", {"path": "."})], usage=None),
        text("listed", usage=None),
        text("<compressed_snapshot><current_goal>- go on</current_goal></compressed_snapshot>"),
        text("after compression", usage=None),
    )
    runner = make_runner("openai", url=fake_openai.url, token_limit=900)
    list(runner.run(f"first {LONG}"))
    list(runner.run("list the project"))
    assert len(fake_openai.requests) == 3 and not _records(runner, "compression")
    events = list(runner.run(f"third {LONG}{LONG}"))
    assert [e for e in events if isinstance(e, Compressed)]
    summary_call, answer_call = fake_openai.requests[3], fake_openai.requests[4]
    assert "[mttui:compress-history]" in summary_call["messages"][0]["content"]
    assert "tools" not in summary_call  # the summary call has no tools
    roles = [m["role"] for m in summary_call["messages"]]
    assert roles.count("tool") == 1 and roles[-1] == "user"  # call + result kept together
    sent = answer_call["messages"]
    assert (
        sent[0]["role"] == "system"
        and "[Summary of the earlier conversation]" in (sent[1]["content"])
    )
    assert sent[-1]["content"].startswith("third")


def test_failed_summaries_change_nothing_and_auto_stops_after_three(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    runner = make_runner("openai", url=fake_openai.url, token_limit=400)
    fake_openai.add(text("one"))
    list(runner.run(f"first {LONG}"))
    notices: list[str] = []
    for i in range(MAX_FAILURES + 1):
        if i < MAX_FAILURES:
            fake_openai.add(error(500, "summary broke"))
        fake_openai.add(text(f"answer {i}"))
        events = list(runner.run(f"again {i} {LONG}"))
        assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
        notices += [e.text for e in events if isinstance(e, Notice)]
    assert not _records(runner, "compression")
    assert not any(is_summary(m) for m in _view(runner))
    assert sum("compression failed" in n for n in notices) == MAX_FAILURES
    assert any("off for this session" in n for n in notices)
    assert len(fake_openai.requests) == 1 + MAX_FAILURES * 2 + 1  # no 4th summary attempt


def test_manual_compact(make_runner: Any) -> None:
    runner = make_runner(auto_compress=False)
    assert [type(e) for e in runner.compact()] == [Notice]  # nothing yet
    for i in range(4):
        list(runner.run(f"turn {i}: {LONG}"))
    events = list(runner.compact("keep the parser details"))
    assert [type(e) for e in events] == [Compressed]
    rec = _records(runner, "compression")[0]
    assert rec["trigger"] == "manual" and rec["removed_count"] == 6 and rec["kept_count"] == 2
    view = _view(runner)
    assert is_summary(view[0]) and [m.id for m in view[1:]] == rec["kept_message_ids"]
    assert runner.graph.get_state(runner.config).next == ()
    assert list(runner.run("after"))[-1].status == "completed"
    # chained: the second summary carries the first one forward
    list(runner.run(f"more {LONG}"))
    list(runner.compact())
    second = _records(runner, "compression")[-1]["summary"]
    assert "from the earlier snapshot" in second
