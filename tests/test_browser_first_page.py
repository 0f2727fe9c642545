"""The browser shows its first page from the index before the catch-up (a stat of every
log) and refreshes the rows when the catch-up changed something, keeping the cursor."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.tui import SIZE, make_app, msg, wait_for, write_session


class HeldCatchUp(SessionService):
    """A service whose catch-ups wait until the test lets them go."""

    def __init__(self, home: Path, project: Path) -> None:
        super().__init__(home, project)
        self.go = threading.Event()
        self.started = threading.Event()

    def catch_up(self, *, all_projects: bool = False) -> bool:
        self.started.set()
        assert self.go.wait(30)
        return super().catch_up(all_projects=all_projects)


def _written_behind(home: Path, project: Path, tmp_path: Path) -> str:
    """A session log the index of ``home`` has never seen (another home's, copied in)."""
    elsewhere = SessionService(tmp_path / "elsewhere", project)
    sid = write_session(elsewhere, "Written behind", [msg("user", "hi", 1)])
    src = elsewhere.get(sid).path
    elsewhere.close()
    dst = home / "history" / src.parent.name / src.name
    dst.write_bytes(src.read_bytes())
    return sid


def _three(home: Path, project: Path, tmp_path: Path) -> tuple[str, str, str]:
    """Two sessions the index knows (older, newer) and a newest one it does not."""
    writer = SessionService(home, project)
    old = write_session(writer, "Old one", [msg("user", "hello", 1)])
    time.sleep(0.01)
    newer = write_session(writer, "Newer", [msg("user", "hello again", 1)])
    writer.close()
    time.sleep(0.01)
    return old, newer, _written_behind(home, project, tmp_path)


async def test_first_page_before_the_catch_up(home: Path, project: Path,
                                              tmp_path: Path) -> None:
    old, newer, behind = _three(home, project, tmp_path)
    service = HeldCatchUp(home, project)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        # the catch-up starts and waits; the rows are there
        await wait_for(pilot, service.started.is_set)
        assert [s.id for s in table.sessions] == [newer, old]
        await pilot.press("j")
        assert table.current_id == old
        service.go.set()
        await wait_for(pilot, lambda: table.row_count == 3 and not app.screen.fetching)
        assert [s.id for s in table.sessions] == [behind, newer, old]
        assert table.current_id == old  # the refresh kept the cursor
