"""Helpers for the TUI tests: sample sessions, an app to drive, what the screen shows."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

from textual.app import App, ComposeResult
from textual.worker import WorkerCancelled

from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.screens.chat import ChatScreen
from mttui.session.models import HistoryPage
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.history_items import Item
from mttui.widgets.pending_lane import PendingLane
from mttui.widgets.prompt import PromptArea
from tests.support.clock import NOW
from tests.support.logs import Record, message, new_session

SIZE = (110, 34)


def settings(**changes: Any) -> Settings:
    return Settings(provider="offline", model="offline", approval="ask").with_overrides(**changes)


def make_app(service: SessionService, **kw: Any) -> MttuiApp:
    kw.setdefault("clock", lambda: NOW)
    kw.setdefault("warm_up", False)
    return MttuiApp(service, kw.pop("settings", settings()), **kw)


def msg(role: str, content: str, n: int, **extra: Any) -> Record:
    """The ``n``-th message of a chat, sent."""
    return message(f"msg-{n}", role, content, **{"status": "sent", **extra})


def write_session(service: SessionService, title: str | None, records: Iterable[Record], *,
                  model: str = "offline", provider: str = "offline") -> str:
    """A closed session of ``records``; its id."""
    return new_session(service, records, title=title, provider=provider, model=model).session_id


def chat_records(count: int, *, start: int = 1) -> list[Record]:
    """``count`` messages: user, assistant with a tool call, tool result, assistant …"""
    out = []
    for n in range(start, start + count):
        k = n % 4
        if k == 1:
            out.append(msg("user", f"question number {n}", n))
        elif k == 2:
            out.append(msg("assistant", "", n, tool_calls=[
                {"id": f"call_{n}", "name": "shell", "args": {"command": f"echo step {n}"}}]))
        elif k == 3:
            out.append(msg("tool", f"step {n - 1}", n, tool_call_id=f"call_{n - 1}",
                           name="shell"))
        else:
            out.append(msg("assistant", f"Answer **{n}**: all good.", n))
    return out


async def settle(pilot: Any, rounds: int = 4) -> None:
    """Let workers finish and their results arrive (a few rounds: results start workers).

    A worker cancelled because a newer one of its exclusive group replaced it (the
    pending lane's refresh) has finished too; a failed worker still fails the test."""
    for _ in range(rounds):
        for worker in list(pilot.app.workers):
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        await pilot.pause()


def screen_text(app: MttuiApp) -> str:
    """What the terminal shows (the top screen, modal included), as plain text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)


async def wait_for(pilot: Any, condition: Any, limit: float = 30.0) -> None:
    """Poll (no timing assertion: the limit only bounds a hang)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not condition():
        assert loop.time() < end, "condition not reached"
        await pilot.pause(0.05)


# -- the pending lane in the chat ---------------------------------------------------
WAIT_FOR_GO = "!while [ ! -f go ]; do sleep 0.05; done; echo went"


async def type_and(pilot: Any, text: str, key: str) -> None:
    prompt = pilot.app.screen.query_one("#prompt", PromptArea)
    prompt.focus()
    prompt.text = text
    await pilot.press(key)


def session_records(service: SessionService, sid: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in service.records(sid)[0] if r["type"] == kind]


def lane_ops_done(app: Any) -> bool:
    """No lane operation (queue, steer, edit…) is still being written."""
    return not any(w.group == "pending" and not w.is_finished for w in app.workers)


def lane_texts(chat: ChatScreen) -> list[tuple[str, str]]:
    return [(r["text"], r["state"]) for r in chat.query_one(PendingLane).rows]


async def send(pilot, text: str) -> None:
    prompt = pilot.app.screen.query_one(PromptArea)
    prompt.focus()
    prompt.text = text
    await pilot.press("enter")


def kinds(service: SessionService, sid: str) -> list[str]:
    return [r["type"] for r in service.records(sid)[0]]


def killed_call_session(service: SessionService, *after: Record, command: str = "make deploy",
                        ask: str = "deploy") -> str:
    """A session whose shell call ``k1`` was dispatched and then closed as interrupted
    by a resume (it may have run), followed by ``after``."""
    call = {"id": "k1", "name": "shell", "args": {"command": command}}
    return write_session(service, "Killed", [
        ("run_start", {"run_id": "run-1"}), msg("user", ask, 1),
        msg("assistant", "", 2, tool_calls=[call]),
        ("tool_dispatch", {"run_id": "run-1", "call_id": "k1", "tool_name": "shell",
                           "arguments_sha256": "x"}),
        ("tool_outcome", {"run_id": "run-1", "call_id": "k1", "status": "interrupted"}),
        msg("tool", "interrupted", 3, tool_call_id="k1", name="shell", status="interrupted"),
        ("run_end", {"run_id": "run-1", "status": "interrupted"}), *after,
    ])


async def select_killed_call(app: MttuiApp, pilot: Any) -> tuple[HistoryView, Item]:
    """The chat's history focused with call ``k1`` of ``killed_call_session`` selected:
    ``(history view, item)``."""
    await settle(pilot)
    view = app.screen.query_one(HistoryView)
    item = view.find(lambda i: i.call_id == "k1")
    assert item is not None
    view.focus()
    view.select(item)
    return view, item


def notes_of(app: MttuiApp) -> list[tuple[str, str]]:
    """What the app says from now on, as (title, message): ``notify`` spied on."""
    said: list[tuple[str, str]] = []
    notify = app.notify

    def spy(message: str, **kw: Any) -> None:
        said.append((str(kw.get("title", "")), message))
        notify(message, **kw)

    app.notify = spy  # type: ignore[method-assign]
    return said


class HistoryHost(App[None]):
    """An app showing a lone history view (of ``view``'s class) over no messages."""

    def __init__(self, view: type[HistoryView] = HistoryView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        yield self.view(lambda **_: HistoryPage("s", [], False, None))
