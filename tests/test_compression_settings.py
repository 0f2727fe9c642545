"""When auto compression fires: threshold, token limit and auto-off from the
environment, provider usage vs the local estimate, nothing to compress, and the
circuit breaker (manual compact still works)."""

from __future__ import annotations

from typing import Any

import pytest
from fake_openai import error, text
from test_compression_support import FILLER, is_summary_message, records, routed_fixture  # noqa: F401

from mttui.config import load_settings
from mttui.graph.compression.auto import MAX_FAILURES
from mttui.graph.events import Compressed, Notice

LONG = FILLER * 40  # ~710 tokens by the local estimate


def _two_turns(make_runner: Any, routed: Any, usage: tuple[int, int] | None = None) -> Any:
    runner = make_runner("openai", url=routed.url)
    routed.add(text("first answer", usage=usage), text("second answer", usage=None))
    list(runner.run("first " + LONG))
    events = list(runner.run("second " + LONG))
    assert events[-1].status == "completed"
    return runner


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, home: Any) -> None:
    monkeypatch.setenv("MTTUI_TOKEN_LIMIT", "12345")
    monkeypatch.setenv("MTTUI_COMPRESSION_THRESHOLD", "0.25")
    monkeypatch.setenv("MTTUI_AUTO_COMPRESS", "false")
    s = load_settings({})
    assert (s.token_limit, s.compression_threshold, s.auto_compress) == (12345, 0.25, False)


@pytest.mark.parametrize(("threshold", "fires"), [("0.1", True), ("0.2", False)])
def test_threshold_from_the_environment_is_honoured(
    make_runner: Any, routed: Any, monkeypatch: pytest.MonkeyPatch, threshold: str, fires: bool
) -> None:
    # the second call's input is ~1 550 tokens: over 10 % of 10 000, under 20 %
    monkeypatch.setenv("MTTUI_TOKEN_LIMIT", "10000")
    monkeypatch.setenv("MTTUI_COMPRESSION_THRESHOLD", threshold)
    runner = _two_turns(make_runner, routed)
    assert runner.settings.token_limit == 10000
    assert bool(routed.summary_requests) is fires
    assert bool(records(runner.writer.path, "compression")) is fires
    assert is_summary_message(routed.agent_requests[-1]["messages"][1]) is fires


def test_auto_off_never_compresses(
    make_runner: Any, routed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MTTUI_TOKEN_LIMIT", "1000")
    monkeypatch.setenv("MTTUI_AUTO_COMPRESS", "0")
    runner = _two_turns(make_runner, routed)
    routed.add(text("third answer", usage=None))
    list(runner.run("third " + LONG))
    assert not routed.summary_requests and not records(runner.writer.path, "compression")
    assert [m["role"] for m in routed.agent_requests[-1]["messages"]] == [
        "system", "user", "assistant", "user", "assistant", "user"]  # fmt: skip


@pytest.mark.parametrize(("usage", "fires"), [((9_000, 10), True), ((11, 7), False), (None, False)])
def test_provider_usage_of_the_previous_call_counts(
    make_runner: Any, routed: Any, monkeypatch: pytest.MonkeyPatch,
    usage: tuple[int, int] | None, fires: bool,
) -> None:  # fmt: skip
    # small messages; only a reported usage of 9 000 (limit 10 000, threshold 0.5) is over
    monkeypatch.setenv("MTTUI_TOKEN_LIMIT", "10000")
    runner = make_runner("openai", url=routed.url)
    routed.add(text("first answer", usage=usage), text("second answer", usage=None))
    list(runner.run("first " + FILLER * 5))
    list(runner.run("second " + FILLER * 5))
    assert bool(routed.summary_requests) is fires
    assert bool(records(runner.writer.path, "compression")) is fires


def test_nothing_to_compress_is_not_a_failure(make_runner: Any, routed: Any) -> None:
    runner = make_runner("openai", url=routed.url, token_limit=600)
    for i in range(2):  # one request alone over the threshold: nothing older to summarize
        routed.add(text(f"answer {i}", usage=None))
        events = list(runner.run(f"only {i} " + FILLER * 12))
        assert events[-1].status == "completed"
        assert not [e for e in events if isinstance(e, Notice)]
        if i == 0:
            assert not routed.summary_requests
    assert len(routed.summary_requests) == 1  # the second turn had the first to compress


def test_circuit_breaker_then_manual_compact(make_runner: Any, routed: Any) -> None:
    runner = make_runner("openai", url=routed.url, token_limit=600)
    routed.add(text("one", usage=None))
    list(runner.run("first " + FILLER * 5))
    told: list[str] = []
    for i in range(MAX_FAILURES + 2):
        routed.summary(error(500, "summaries are broken"))
        routed.add(text(f"answer {i}", usage=None))
        events = list(runner.run(f"again {i} " + FILLER * 5))
        assert events[-1].status == "completed"
        told += [e.text for e in events if isinstance(e, Notice)]
    assert len(routed.summary_requests) == MAX_FAILURES  # then auto stays off
    assert sum("compression failed" in t for t in told) == MAX_FAILURES
    assert any("off for this session" in t for t in told)
    assert not records(runner.writer.path, "compression")
    routed.summaries.clear()  # the summaries work again: /compact still can
    assert [type(e) for e in runner.compact()] == [Compressed]
    assert records(runner.writer.path, "compression")[0]["trigger"] == "manual"
