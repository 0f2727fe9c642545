"""Following the conversation: after sending, the history shows its end even when it
was scrolled up; an expanded block at the bottom comes into view."""

from __future__ import annotations

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.tui import (
    SIZE,
    chat_records,
    kinds,
    make_app,
    msg,
    send,
    settle,
    wait_for,
    write_session,
)


async def test_sending_scrolls_to_the_end(service: SessionService) -> None:
    sid = write_session(service, "Long", chat_records(40))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        view = app.screen.query_one(HistoryView)
        view.scroll_to_y(0)
        await pilot.pause()
        assert not view.at_bottom
        await send(pilot, "and now?")
        assert view.at_bottom  # at once, not only when the run has ended
        await wait_for(pilot, lambda: app.screen.state == "idle"
                       and "run_end" in kinds(service, sid))
        await settle(pilot)
        assert view.at_bottom


async def test_expanding_the_last_block_shows_it(service: SessionService) -> None:
    output = "\n".join(f"line {i}" for i in range(60))
    sid = write_session(service, "Tool", [
        msg("user", "run it", 1),
        msg("assistant", "", 2, tool_calls=[{"id": "c1", "name": "shell",
                                             "args": {"command": "seq 60"}}]),
        msg("tool", output, 3, tool_call_id="c1", name="shell"),
    ])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        view = app.screen.query_one(HistoryView)
        view.focus()
        block = next(it for it in reversed(view.items) if it.expandable)
        view.select(block)
        await pilot.press("enter")
        await pilot.pause()
        assert block.expanded
        top = view.offset_of(block)
        assert view.scroll_y <= top + 1 < view.scroll_y + view.scrollable_content_region.height
        assert view.scroll_y > 0


async def test_the_end_stays_in_view_when_the_history_gets_shorter(
        service: SessionService) -> None:
    """A panel below the history (resume warnings, an approval) or a smaller terminal
    takes lines from it: a history that showed its end still shows it; one scrolled up
    stays where it was."""
    sid = write_session(service, "Long", chat_records(40))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        view = app.screen.query_one(HistoryView)
        assert view.at_bottom
        await pilot.resize_terminal(SIZE[0], SIZE[1] - 8)
        await settle(pilot)
        assert view.at_bottom
        view.scroll_to_y(5)
        await pilot.pause()
        await pilot.resize_terminal(SIZE[0], SIZE[1] - 12)
        await settle(pilot)
        assert view.scroll_y == 5
