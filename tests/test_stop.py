"""Stops that really stop: the in-flight model request, the queue after a stop."""

from __future__ import annotations

import threading
import time
from typing import Any

from mttui.graph.events import RunEnded, RunStarted
from tests.support.fake_openai import FakeOpenAI, hang


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


def _handle(home: Any, project: Any, url: str, first: str) -> Any:
    from mttui.config import load_settings
    from mttui.core.handle import SessionHandle
    from mttui.session.service import SessionService

    settings = load_settings({"provider": "openai", "base_url": url, "approval": "yolo"})
    settings = settings.with_overrides(max_retries=0, timeout=10.0)
    return SessionHandle.create(SessionService(home, project), settings, first)


def _users(fake: FakeOpenAI) -> list[str]:
    return [[m for m in r["messages"] if m["role"] == "user"][-1]["content"]
            for r in fake.requests]  # fmt: skip


def _never_asked(request: Any) -> None:
    raise AssertionError("no approval expected")


def test_a_user_stop_holds_the_queue_and_the_steers_until_resumed(
    home: Any, project: Any, fake_openai: FakeOpenAI
) -> None:
    from mttui.core.drive import drain, drive, resume_queue, send
    from mttui.graph.events import TextDelta
    from tests.support.fake_openai import slow, text

    fake_openai.add(slow("a long answer " * 40, delay=0.05, pieces=80),
                    text("steer answered"), text("queue answered"), text("direct"),
                    text("later"))  # fmt: skip
    handle = _handle(home, project, fake_openai.url, "first")
    try:
        def emit(event: Any) -> None:
            if isinstance(event, TextDelta) and not handle.runner.stopping:
                handle.pending.steer("steer me")  # typed while the answer streams
                handle.pending.add("queued one")
                handle.stop()  # the user's Esc

        outcome = drive(handle, handle.run("first"), emit=emit, ask=_never_asked)
        assert outcome.status == "stopped"
        # nothing of the lane runs by itself after a stop: it is held
        assert list(drain(handle, emit=lambda e: None, ask=_never_asked,
                          stop=lambda: False)) == []  # fmt: skip
        assert _users(fake_openai) == ["first"]
        assert handle.pending.is_held
        states = {row["mode"]: row["state"] for row in handle.pending.items()}
        assert states == {"steer": "held", "queue": "held"}
        # a normal send still runs at once; the held items stay held
        assert send(handle, "direct one", emit=lambda e: None,
                    ask=_never_asked).status == "completed"  # fmt: skip
        assert handle.pending.is_held
        # the user resumes: the steer first, then the queue
        ends = [o.status for o in resume_queue(handle, emit=lambda e: None, ask=_never_asked,
                                               stop=lambda: False)]  # fmt: skip
        assert ends == ["completed", "completed"]
        assert _users(fake_openai) == ["first", "direct one", "steer me", "queued one"]
        assert not handle.pending.is_held and handle.pending.items() == []
    finally:
        handle.close()


async def test_escape_holds_the_queue_in_the_chat(home: Any, project: Any) -> None:
    """The TUI: Esc stops the run; the queued message waits, shown held, until ctrl+r."""
    from mttui.session.service import SessionService
    from mttui.widgets.pending_lane import PendingLane
    from tests.support.tui import (
        SIZE,
        WAIT_FOR_GO,
        lane_texts,
        make_app,
        session_records,
        settings,
        settle,
        type_and,
        wait_for,
    )

    service = SessionService(home, project)
    app = make_app(service, open_browser=False, settings=settings(approval="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await type_and(pilot, WAIT_FOR_GO, "enter")
        await wait_for(pilot, lambda: chat.chat.writer is not None and b'"tool_dispatch"'
                       in chat.chat.writer.path.read_bytes())  # fmt: skip
        await type_and(pilot, "then summarize", "enter")  # busy: queued
        await wait_for(pilot, lambda: lane_texts(chat) == [("then summarize", "waiting")])
        await pilot.press("escape")
        sid = chat.chat.session_id
        def ended() -> list[str]:
            return [r["status"] for r in session_records(service, sid, "run_end")]

        await wait_for(pilot, lambda: ended() == ["stopped"] and chat.state == "idle")
        lane = chat.query_one(PendingLane)
        await wait_for(pilot, lambda: lane_texts(chat) == [("then summarize", "held")])
        await pilot.pause(0.5)  # a drain that ran anyway would have taken it by now
        assert lane.held and session_records(service, sid, "pending_take") == []
        await pilot.press("ctrl+r")  # Resume queue
        await wait_for(pilot, lambda: len(session_records(service, sid, "run_end")) == 2)
        assert [r["status"] for r in session_records(service, sid, "run_end")] == ["stopped",
                                                                           "completed"]
        assert len(session_records(service, sid, "pending_take")) == 1
