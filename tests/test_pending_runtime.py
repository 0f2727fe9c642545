"""Steer and Queue against the scripted server: boundaries, batches, order, stop, retry."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, slow, text, tools

from mttui.core.pending import PendingInputs
from mttui.graph.events import ApprovalRequested, RunEnded, RunEvent, TextDelta
from mttui.session.reader import read_all

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done; echo done"


def _records(runner: Any, type_: str) -> list[dict[str, Any]]:
    return [r for r in read_all(runner.writer.path)[0] if r["type"] == type_]


def _wait_for(path: Path, needle: bytes, deadline: float = 30.0) -> None:
    end = time.monotonic() + deadline
    while needle not in path.read_bytes():
        assert time.monotonic() < end, f"{needle!r} never written"
        time.sleep(0.02)


def _in_thread(events: Any) -> tuple[threading.Thread, list[RunEvent]]:
    out: list[RunEvent] = []
    thread = threading.Thread(target=lambda: out.extend(events), daemon=True)
    thread.start()
    return thread, out


def _sent_users(fake: FakeOpenAI) -> list[str]:
    """The user text each model call was made for (its last user message)."""
    return [[m for m in r["messages"] if m["role"] == "user"][-1]["content"]
            for r in fake.requests]  # fmt: skip


def _history(runner: Any) -> list[tuple[str, str, str]]:
    from mttui.session.transcript import fold

    recs, _ = read_all(runner.writer.path)
    return [(m["role"], m.get("status", ""), str(m.get("content") or "")[:30])
            for m in fold(recs).messages]  # fmt: skip


def test_two_steers_at_a_tool_batch_boundary(make_runner: Any, fake_openai: FakeOpenAI,
                                            project: Path) -> None:
    fake_openai.add(tools([("call_1", "shell", {"command": WAIT_FOR_GO})], content="looking"),
                    text("answer with the steers"))  # fmt: skip
    runner = make_runner("openai", url=fake_openai.url, approval="yolo")
    pending = PendingInputs(runner.writer, runner)
    thread, events = _in_thread(runner.run("fix the bug"))
    _wait_for(runner.writer.path, b'"tool_dispatch"')
    pending.steer("also check utils.py")
    pending.steer("and keep the API")
    assert [i["state"] for i in pending.items()] == ["unread", "unread"]
    (project / "go").write_text("")
    thread.join(30)
    assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
    # one batch, one model call: both texts joined by a blank line after the tool result
    assert len(fake_openai.requests) == 2
    last = fake_openai.requests[1]["messages"]
    assert [m["role"] for m in last[-2:]] == ["tool", "user"]
    assert last[-1]["content"] == "also check utils.py\n\nand keep the API"
    # each steer its own user message; old assistant < steers < new assistant
    assert _history(runner) == [
        ("user", "sent", "fix the bug"), ("assistant", "sent", "looking"),
        ("tool", "sent", "done\n"), ("user", "sent", "also check utils.py"),
        ("user", "sent", "and keep the API"), ("assistant", "sent", "answer with the steers"),
    ]  # fmt: skip
    reads = _records(runner, "pending_read")
    assert len(reads) == 1 and len(reads[0]["message_ids"]) == 2
    assert [i["state"] for i in pending.items()] == []  # read: no longer pending
    # the index numbers them the same way
    from mttui.session.service import SessionService

    page = SessionService(runner.writer.path.parents[2], project).history(
        runner.writer.session_id)
    assert [m.content[:30] for m in page.messages] == [h[2] for h in _history(runner)]


def test_steer_waits_for_a_pending_approval_and_never_cancels_it(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    fake_openai.add(tools([("call_1", "shell", {"command": "echo hi > out.txt"})]),
                    text("after the tool and the steer"))  # fmt: skip
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    pending = PendingInputs(runner.writer, runner)
    first = list(runner.run("write a file"))
    request = next(e for e in first if isinstance(e, ApprovalRequested))
    assert first[-1].status == "awaiting_approval"
    pending.steer("use hi as content")
    assert pending.next_run() is None  # idle, but the approval waits: nothing starts
    assert runner.pending_approval().request_id == request.request_id
    assert [i["state"] for i in pending.items()] == ["unread"]
    assert len(fake_openai.requests) == 1
    second = list(runner.answer_approval(request.request_id, {"call_1": "approve"}))
    assert second[-1].status == "completed" and (project / "out.txt").exists()
    assert fake_openai.requests[1]["messages"][-1]["content"] == "use hi as content"
    assert [r[0] for r in _history(runner)] == ["user", "assistant", "tool", "user",
                                                 "assistant"]  # fmt: skip


def test_queue_runs_fifo_after_the_steers(make_runner: Any, fake_openai: FakeOpenAI) -> None:
    runner = make_runner("openai", url=fake_openai.url)
    pending = PendingInputs(runner.writer, runner)
    list(runner.run("hello"))
    pending.add("first queued")
    pending.add("second queued")
    pending.steer("a steer typed last")
    runs = 0
    for events in pending.drain():
        runs += 1
        assert list(events)[-1].status == "completed"
    assert runs == 3 and list(pending.drain()) == []
    assert _sent_users(fake_openai) == ["hello", "a steer typed last", "first queued",
                                        "second queued"]  # fmt: skip
    takes = _records(runner, "pending_take")
    assert [t["message"]["content"] for t in takes] == ["first queued", "second queued"]
    assert pending.items() == []


def test_items_found_at_open_are_held(make_runner: Any, fake_openai: FakeOpenAI) -> None:
    runner = make_runner("openai", url=fake_openai.url)
    PendingInputs(runner.writer).add("left from before")
    pending = PendingInputs(runner.writer, runner)  # "a process opens the session"
    assert [i["state"] for i in pending.items()] == ["held"]
    list(runner.run("a normal send still runs"))
    assert list(pending.drain()) == [] and len(fake_openai.requests) == 1
    pending.resume_queue()
    assert [list(e)[-1].status for e in pending.drain()] == ["completed"]
    assert _sent_users(fake_openai) == ["a normal send still runs", "left from before"]


def test_stop_consumes_the_item_and_the_queue_goes_on(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(slow("a long answer " * 20, delay=0.05, pieces=40), text("second done"))
    runner = make_runner("openai", url=fake_openai.url)
    pending = PendingInputs(runner.writer, runner, hold=False)
    pending.add("long one")
    pending.add("next one")
    ends = []
    for events in pending.drain():
        for event in events:
            if isinstance(event, TextDelta) and not ends:
                runner.stop()  # only during the first item's answer
            if isinstance(event, RunEnded):
                ends.append(event.status)
    assert ends == ["stopped", "completed"]
    assert _sent_users(fake_openai) == ["long one", "next one"]
    assert [t["item_id"] for t in _records(runner, "pending_take")] == [
        i.id for i in pending.lane.items.values()][:2]  # fmt: skip
    assert pending.items() == []


def test_failure_before_the_message_puts_the_item_back(make_runner: Any, home: Path) -> None:
    runner = make_runner("openai", url=None)  # no endpoint: the model cannot be built
    pending = PendingInputs(runner.writer, runner, hold=False)
    pending.add("needs a model")
    pending.add("behind it")
    runs = [list(events) for events in pending.drain()]
    assert len(runs) == 1 and not any(isinstance(e, RunEnded) for e in runs[0])
    assert [(i["text"], i["state"]) for i in pending.items()] == [
        ("needs a model", "needs_retry"), ("behind it", "waiting")]  # fmt: skip
    assert not _records(runner, "pending_take") and not _records(runner, "run_start")
    assert _records(runner, "pending_fail")[0]["error"]


def test_steer_during_the_last_answer_continues_the_same_run(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(slow("the first answer", delay=0.02, pieces=10), text("the new answer"))
    runner = make_runner("openai", url=fake_openai.url)
    pending = PendingInputs(runner.writer, runner)
    events = []
    for event in runner.run("explain"):
        if isinstance(event, TextDelta) and not pending.lane.items:
            pending.steer("shorter please")  # while the answer streams
        events.append(event)
    assert [e.status for e in events if isinstance(e, RunEnded)] == ["completed"]
    assert len(_records(runner, "run_start")) == 1  # one run, two assistant messages
    assert [(r, t) for r, _, t in _history(runner)] == [
        ("user", "explain"), ("assistant", "the first answer"),
        ("user", "shorter please"), ("assistant", "the new answer")]  # fmt: skip
    assert _sent_users(fake_openai) == ["explain", "shorter please"]
