"""After a search jump the history has the focus at once: ``end`` goes to the newest."""

from __future__ import annotations

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.tui import SIZE, chat_records, make_app, msg, settle, wait_for, write_session


async def test_end_works_right_after_a_search_jump(service: SessionService) -> None:
    records = chat_records(600)
    records[99] = msg("user", "the zanzibar incident", 100)
    sid = write_session(service, "Search me", records)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await pilot.press(*"zanzibar")
        await pilot.pause(0.3)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        assert view.has_focus
        assert view.has_newer
        await pilot.press("end")
        await settle(pilot)
        await wait_for(pilot, lambda: not view.has_newer)
