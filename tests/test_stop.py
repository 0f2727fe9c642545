"""Stops that really stop: the in-flight model request, the queue after a stop."""

from __future__ import annotations

import threading
import time
from typing import Any

from fake_openai import FakeOpenAI, hang

from mttui.graph.events import RunEnded, RunStarted


def _wait(cond: Any, bound: float) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return bool(cond())


def test_stop_before_the_first_token_cancels_the_request_without_a_retry(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    held = 60.0  # the server holds the reply far longer than anything below
    fake_openai.add(hang(held), hang(held))
    # retries allowed and a timeout shorter than the hold: the old code timed out,
    # retried, and sent a second (paid) request after the stop
    runner = make_runner("openai", url=fake_openai.url, max_retries=2, timeout=held / 4)
    events: list[Any] = []
    for event in runner.run("hello"):
        events.append(event)
        if isinstance(event, RunStarted):
            def stop_soon() -> None:
                _wait(lambda: len(fake_openai.requests) >= 1, held / 4)
                runner.stop()
            threading.Thread(target=stop_soon).start()
    end = events[-1]
    assert isinstance(end, RunEnded) and end.status == "stopped"
    # the client hangs up well before its own timeout would have ended the request
    assert _wait(lambda: fake_openai.disconnects == 1, held / 8)
    time.sleep(0.5)  # a retry would come right after the connection closed
    assert len(fake_openai.requests) == 1
    # the session goes on: the next turn is answered
    fake_openai.script.clear()
    assert list(runner.run("again"))[-1].status == "completed"
    assert len(fake_openai.requests) == 2
