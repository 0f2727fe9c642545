"""Helpers for the TUI tests: fixed ids and times, sample sessions, an app to drive.

Fixtures ``service`` and ``frozen``: import ``service_fixture``/``frozen_fixture``.

(No tests here; imported by the ``test_tui_*`` modules and ``test_snapshots``.)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.session.records import iso_timestamp
from mttui.session.service import SessionService

NOW = datetime(2026, 11, 29, 18, 0, 0, tzinfo=UTC)
START = NOW - timedelta(days=3)
SIZE = (110, 34)


class FrozenClock:
    """Record timestamps that advance ``step`` per record from ``START``."""

    def __init__(self, start: datetime = START, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def stamp(self, when: datetime | None = None) -> str:
        self.now += self.step
        return iso_timestamp(self.now)

    def jump(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture(name="frozen")
def frozen_fixture(monkeypatch: pytest.MonkeyPatch) -> FrozenClock:
    """Deterministic record timestamps and session ids (``5e55000000NN``)."""
    clock = FrozenClock()
    counter = itertools.count(1)
    monkeypatch.setattr("mttui.session.log.iso_timestamp", clock.stamp)
    monkeypatch.setattr("mttui.session.service.new_session_id",
                        lambda: f"5e55{next(counter):08x}")
    ids = itertools.count(1)
    def new_id(prefix: str) -> str:
        return f"{prefix}-{next(ids)}"

    monkeypatch.setattr("mttui.session.records.new_id", new_id)
    monkeypatch.setattr("mttui.session.service.new_id", new_id)
    return clock


@pytest.fixture(name="service")
def service_fixture(home: Path, project: Path) -> SessionService:
    return SessionService(home, project)


def settings(**changes: Any) -> Settings:
    return Settings(provider="offline", model="offline", approval="ask").with_overrides(**changes)


def make_app(service: SessionService, **kw: Any) -> MttuiApp:
    kw.setdefault("clock", lambda: NOW)
    kw.setdefault("warm_up", False)
    return MttuiApp(service, kw.pop("settings", settings()), **kw)


def msg(role: str, content: str, n: int, **extra: Any) -> tuple[str, dict[str, Any]]:
    return "transcript_message", {"message": {"id": f"msg-{n}", "role": role,
                                              "content": content, "status": "sent", **extra}}


def write_session(service: SessionService, title: str | None,
                  records: Iterable[tuple[str, dict[str, Any]]], *, model: str = "offline",
                  provider: str = "offline") -> str:
    with service.create_session(provider=provider, model=model, title=title) as w:
        batch = list(records)
        for i in range(0, len(batch), 500):
            w.append_many(batch[i:i + 500])
        return w.session_id


def chat_records(count: int, *, start: int = 1) -> list[tuple[str, dict[str, Any]]]:
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
    """Let workers finish and their results arrive (a few rounds: results start workers)."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def screen_text(app: MttuiApp) -> str:
    """What the terminal shows (the top screen, modal included), as plain text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)
