"""The browser's first page, read while the app starts (``FirstPage``), is in its first
frame, and the catch-up (a stat of every log) starts only once that frame is drawn."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mttui.session.errors import MttuiError
from mttui.session.first_page import FirstPage
from mttui.session.models import SessionPage
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import SIZE, make_app, msg, wait_for, write_session


class Counting(SessionService):
    """Counts reads of the index as it is; notes whether rows were shown at the catch-up."""

    def __init__(self, home: Path, project: Path) -> None:
        super().__init__(home, project)
        self.plain_reads = 0
        self.app: Any = None
        self.rows_at_catch_up: list[int] = []

    def list_sessions(self, **kw: Any) -> SessionPage:
        if kw.get("fresh") is False:
            self.plain_reads += 1
        return super().list_sessions(**kw)

    def catch_up(self, *, all_projects: bool = False) -> bool:
        if self.app is not None:
            self.rows_at_catch_up.append(self.app.screen.query_one(SessionTable).row_count)
        return super().catch_up(all_projects=all_projects)


def _sessions(home: Path, project: Path, count: int) -> list[str]:
    writer = SessionService(home, project)
    ids = [write_session(writer, f"Session {n}", [msg("user", f"hello {n}", 1)])
           for n in range(count)]
    writer.list_sessions()  # indexed
    writer.close()
    return ids


async def test_a_page_read_beforehand_is_in_the_first_frame(home: Path, project: Path) -> None:
    ids = _sessions(home, project, 3)
    service = Counting(home, project)
    first = FirstPage(service)
    app = make_app(service, first_page=first)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionTable)
        assert table.row_count == 3  # at the first frame, no waiting
        assert {s.id for s in table.sessions} == set(ids)
        await wait_for(pilot, lambda: not app.screen.fetching)
        assert service.plain_reads == 1  # the browser used the page read beforehand
        assert table.row_count == 3
        assert app.screen.query_one("#preview").session_id == table.current_id


async def test_the_catch_up_starts_after_the_first_frame(home: Path, project: Path) -> None:
    _sessions(home, project, 4)
    service = Counting(home, project)
    app = service.app = make_app(service, first_page=FirstPage(service))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: not app.screen.fetching)
    assert service.rows_at_catch_up == [4]  # the rows were laid out when it started


class Failing(SessionService):
    def list_sessions(self, **kw: Any) -> SessionPage:
        raise MttuiError("the index is locked")


def test_first_page_is_taken_once_and_a_failed_read_is_none(home: Path,
                                                            project: Path) -> None:
    ids = _sessions(home, project, 2)
    first = FirstPage(SessionService(home, project))
    page = first.take(30)
    assert page is not None and {s.id for s in page.sessions} == set(ids)
    assert first.take(30) is None  # once
    assert FirstPage(Failing(home, project)).take(30) is None


def test_first_page_not_ready_in_time_is_none(home: Path, project: Path) -> None:
    _sessions(home, project, 1)
    gate = threading.Event()

    class Slow(SessionService):
        def list_sessions(self, **kw: Any) -> SessionPage:
            gate.wait(30)
            return super().list_sessions(**kw)

    first = FirstPage(Slow(home, project))
    assert first.take(0.01) is None  # the browser reads it itself
    gate.set()
