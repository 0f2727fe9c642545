"""An async model's stream is read on the model loop: the chunks are added up and
the deltas emitted there, and the node's thread wakes once, at the end (not once per
chunk); a stop still returns at once with the partial answer."""

from __future__ import annotations

import threading
from typing import Any

from mttui.config import load_settings
from mttui.graph.events import TextDelta
from mttui.graph.models import make_model
from mttui.graph.reasoning import call_model
from tests.support.fake_openai import FakeOpenAI, slow, text


def _model(url: str) -> Any:
    settings = load_settings({"provider": "openai", "base_url": url, "api_key": "k",
                              "model": "m"})
    return make_model(settings.with_overrides(max_retries=0))


def test_deltas_come_from_the_model_loop_before_the_call_returns(
        fake_openai: FakeOpenAI) -> None:
    from langchain_core.messages import HumanMessage

    fake_openai.add(text("one two three four five six", pieces=6))
    where: list[str] = []
    deltas: list[str] = []
    returned = threading.Event()

    def emit(event: Any) -> None:
        assert not returned.is_set(), "a delta after the call returned"
        if isinstance(event, TextDelta):
            where.append(threading.current_thread().name)
            deltas.append(event.text)

    result = call_model(_model(fake_openai.url), [HumanMessage("count")], threading.Event(),
                        emit)  # fmt: skip
    returned.set()
    assert result.message is not None and not result.interrupted
    assert "".join(deltas) == result.message.content == "one two three four five six"
    assert len(deltas) >= 2 and set(where) == {"mttui-model-loop"}


def test_a_stop_returns_the_partial_answer(fake_openai: FakeOpenAI) -> None:
    from langchain_core.messages import HumanMessage

    fake_openai.add(slow("a b c d e f g h i j", delay=0.2, pieces=10))
    stop = threading.Event()
    deltas: list[str] = []

    def emit(event: Any) -> None:
        if isinstance(event, TextDelta):
            deltas.append(event.text)
            stop.set()  # the user stops after the first words

    result = call_model(_model(fake_openai.url), [HumanMessage("go")], stop, emit)
    assert result.interrupted and result.message is not None
    assert result.message.content == "".join(deltas) and deltas


def test_a_fast_stream_lets_go_of_the_lock_and_loses_nothing(
        fake_openai: FakeOpenAI, monkeypatch: Any) -> None:
    """A stream that comes faster than it is parsed pauses the model loop now and then
    (so the UI thread gets the interpreter lock, B13); every word still arrives."""
    from langchain_core.messages import HumanMessage

    from mttui.graph import model_stream

    paces: list[model_stream.Pace] = []

    class Counted(model_stream.Pace):
        def __init__(self) -> None:
            super().__init__()
            paces.append(self)

    monkeypatch.setattr(model_stream, "Pace", Counted)
    words = " ".join(f"w{i}" for i in range(3000))
    fake_openai.add(text(words, pieces=1500))
    deltas: list[str] = []

    def emit(event: Any) -> None:
        if isinstance(event, TextDelta):
            deltas.append(event.text)

    result = call_model(_model(fake_openai.url), [HumanMessage("go")], threading.Event(), emit)
    assert result.message is not None and not result.interrupted
    assert result.message.content == "".join(deltas) == words
    assert len(paces) == 1 and paces[0].pauses >= 1  # 1 500 chunks: far more than a burst


def test_the_pace_pauses_after_each_burst_of_cpu() -> None:
    import asyncio

    from mttui.graph.model_stream import BURST_S, Pace

    now = [0.0]
    pace = Pace(clock=lambda: now[0])

    async def chunks(cpu_each: float, n: int) -> int:
        before = pace.pauses
        for _ in range(n):
            now[0] += cpu_each
            await pace.step()
        return pace.pauses - before

    # a short answer (a tool call: a few chunks) is never paused
    assert asyncio.run(chunks(BURST_S / 100, 50)) == 0
    # a long fast one: a pause after every burst's worth of the thread's CPU
    assert asyncio.run(chunks(BURST_S / 4, 40)) == 10
