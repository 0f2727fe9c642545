"""A search that must first write many owed FTS rows (after an upgrade of the index or
a big fork) says so, in the search panel and on the CLI's stderr, instead of seconds
of a bare "searching…"."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from mttui.screens.search import SearchScreen
from mttui.session.index import owed, shards
from mttui.session.service import SessionService
from tests.support.long_session import write_long_session
from tests.support.resume import cli
from tests.support.tui import SIZE, make_app, msg, wait_for, write_session


def _owe_everything(service: SessionService) -> None:
    """What a migration of the shards leaves: every message's FTS rows owed."""
    service.close()
    conn = sqlite3.connect(service.layout.index_path)
    conn.isolation_level = None
    shards.register(conn)
    conn.execute("BEGIN")
    shards.migrate(conn)
    conn.execute("COMMIT")
    conn.close()


def _four_owed(home: Path, project: Path, word: str,
               monkeypatch: pytest.MonkeyPatch) -> SessionService:
    """Four messages saying ``word``, their FTS rows owed, told about from three on."""
    monkeypatch.setattr(owed, "NOTE_FROM", 3)
    service = SessionService(home, project)
    write_session(service, "T", [msg("user", f"{word} {i}", i + 1) for i in range(4)])
    _owe_everything(service)
    return service


def test_the_search_is_told_how_many_messages_it_indexes_first(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _four_owed(home, project, "word", monkeypatch)
    told: list[int] = []
    assert len(service.search("word", indexing=told.append)) == 4
    assert told == [4]
    assert len(service.search("word", indexing=told.append)) == 4
    assert told == [4]  # written once


async def test_the_search_panel_says_it_is_indexing(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _four_owed(home, project, "zephyr", monkeypatch)
    release = threading.Event()
    real_pay = owed.pay

    def slow_pay(conn: sqlite3.Connection, sess: int | None = None) -> int:
        release.wait(10)  # the seconds of tokenizing, held until the note was seen
        return real_pay(conn, sess)

    monkeypatch.setattr(owed, "pay", slow_pay)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        app.screen.query_one(Input).value = "zephyr"

        def count() -> str:
            return str(app.screen.query_one("#count", Static).render())

        await wait_for(pilot, lambda: "first indexing 4 messages" in count())
        app.screen.query_one(Input).value = "zephyr 3"  # typed on: it waits for the same
        await pilot.pause(0.4)  # past the debounce: the newer search has started
        assert "first indexing 4 messages" in count()
        release.set()
        await wait_for(pilot, lambda: count().startswith("1 hit"))


def test_mttui_search_says_so_on_stderr(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    write_long_session(service, "aaaa11112222", owed.NOTE_FROM + 100, every=10_000,
                       text_bytes=40)  # fmt: skip
    _owe_everything(service)
    first = cli(home, project, "search", "lorem", "--limit", "1")
    assert first.returncode == 0, first.stderr
    assert "first indexing" in first.stderr and "messages for search" in first.stderr
    assert "aaaa11112222" in first.stdout
    again = cli(home, project, "search", "lorem", "--limit", "1")
    assert again.returncode == 0 and "first indexing" not in again.stderr
