"""A failed model request is retried by our own loop, visibly: "retrying 1/2 after …"."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import mttui.graph.retry as retry
from mttui.graph.events import ModelRetry, RunEnded, RunStarted
from mttui.graph.retry import allowed_retries, retry_reason
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.fake_openai import FakeOpenAI, error, hang, text
from tests.support.tui import SIZE, make_app, send, settings, settle, wait_for


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BACKOFF_S", (0.05, 0.1))


def _retries(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, ModelRetry)]


def test_one_503_is_retried_once_and_the_answer_arrives(
        make_runner: Any, fake_openai: FakeOpenAI, quick: None) -> None:
    fake_openai.add(error(503, "busy"), text("here it is"))
    runner = make_runner("openai", url=fake_openai.url, max_retries=2)
    events = list(runner.run("hello"))
    assert _retries(events) == ["retrying 1/2 after HTTP 503"]
    end = events[-1]
    assert isinstance(end, RunEnded) and end.status == "completed"
    assert len(fake_openai.requests) == 2
    assert "here it is" in [m["message"]["content"] for m in _messages(runner)]


def test_a_hang_beyond_the_timeout_is_retried(
        make_runner: Any, fake_openai: FakeOpenAI, quick: None) -> None:
    fake_openai.add(hang(3), text("fine now"))
    runner = make_runner("openai", url=fake_openai.url, max_retries=2, timeout=0.4)
    events = list(runner.run("hello"))
    assert _retries(events) == ["retrying 1/2 after timeout"]
    assert events[-1].status == "completed"


def test_when_every_attempt_fails_there_is_one_clear_error(
        make_runner: Any, fake_openai: FakeOpenAI, quick: None) -> None:
    fake_openai.add(error(500, "down"), error(502, "down"), error(503, "down"), text("never"))
    runner = make_runner("openai", url=fake_openai.url, max_retries=2)
    events = list(runner.run("hello"))
    assert _retries(events) == ["retrying 1/2 after HTTP 500", "retrying 2/2 after HTTP 502"]
    end = events[-1]
    assert end.status == "error" and len(fake_openai.requests) == 3
    assert end.error is not None and end.error.startswith("model request failed: HTTP 503")
    assert end.error.endswith("(after 2 retries)")
    errors = [m for m in _messages(runner) if m["message"].get("status") == "error"]
    assert len(errors) == 1


def test_a_bad_request_is_not_retried(make_runner: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.add(error(400, "bad"), text("never"))
    runner = make_runner("openai", url=fake_openai.url, max_retries=2)
    events = list(runner.run("hello"))
    assert _retries(events) == [] and events[-1].status == "error"
    assert len(fake_openai.requests) == 1


def test_a_stop_ends_the_backoff_wait_at_once(
        make_runner: Any, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BACKOFF_S", (60.0,))  # far longer than the test may take
    fake_openai.add(error(503, "busy"), text("never sent"))
    runner = make_runner("openai", url=fake_openai.url, max_retries=2)
    events: list[Any] = []
    waited = threading.Event()
    for event in runner.run("hello"):
        events.append(event)
        if isinstance(event, ModelRetry):
            waited.set()
            threading.Thread(target=runner.stop).start()
    assert waited.is_set()
    assert events[-1].status == "stopped"
    time.sleep(0.2)  # a retry would be sent right after the wait
    assert len(fake_openai.requests) == 1
    assert not [e for e in events if isinstance(e, RunStarted)][1:]


def test_retry_reasons_and_counts() -> None:
    class Status(Exception):
        def __init__(self, code: int) -> None:
            self.status_code = code

    class APITimeoutError(Exception):
        pass

    assert retry_reason(Status(429)) == "HTTP 429"
    assert retry_reason(Status(500)) == "HTTP 500"
    assert retry_reason(Status(401)) is None
    assert retry_reason(APITimeoutError()) == "timeout"
    assert retry_reason(ConnectionRefusedError()) == "connection error"
    assert retry_reason(ValueError("bug")) is None
    from mttui.graph.models import make_model
    from mttui.graph.models.offline import OfflineChatModel

    model = make_model(settings(provider="openai", model="m", base_url="http://x/v1",
                                max_retries=3))
    assert model.max_retries == 0  # the client's own retries are off: ours are seen
    assert allowed_retries(model.bind_tools([])) == 3
    assert allowed_retries(OfflineChatModel()) == 0


async def test_the_chat_shows_the_retry_once_then_the_answer(
        service: SessionService, fake_openai: FakeOpenAI, quick: None) -> None:
    fake_openai.add(error(503, "busy"), text("the answer after all"))
    app = make_app(service, open_browser=False, settings=settings(
        provider="openai", model="m", base_url=fake_openai.url, max_retries=2))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send(pilot, "hello")
        view = app.screen.query_one(HistoryView)
        await wait_for(pilot, lambda: app.screen.state == "idle" and any(
            "the answer after all" in i.text for i in view.items))
        notices = [i.text for i in view.items if i.kind == "notice"]
        assert notices == ["retrying 1/2 after HTTP 503"]
        assert not [i for i in view.items if i.status == "error"]


def _messages(runner: Any) -> list[dict[str, Any]]:
    from mttui.session.reader import read_all

    records, _ = read_all(runner.writer.path)
    return [r for r in records if r["type"] == "transcript_message"]


def test_exec_says_it_retries_on_stderr(
        home: Any, project: Any, fake_openai: FakeOpenAI, quick: None,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mttui.cli import main

    for var in ("MTTUI_PROVIDER", "MTTUI_MODEL", "MTTUI_APPROVAL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MTTUI_MAX_RETRIES", "2")
    monkeypatch.chdir(project)
    fake_openai.add(error(429, "slow down"), text("done"))
    assert main(["exec", "--provider", "openai", "--model", "m", "hello"]) == 0
    out = capsys.readouterr()
    assert "done" in out.out
    assert out.err.count("mttui: retrying 1/2 after HTTP 429") == 1
