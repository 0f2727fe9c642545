"""An interrupted tool call in the history offers the ledger's actions only while it is
unsettled: settled, it says how; a re-run denied at its approval offers them again."""

from __future__ import annotations

from typing import Any

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.logs import records
from tests.support.tui import (
    SIZE,
    killed_call_session,
    make_app,
    screen_text,
    select_killed_call,
    settle,
    wait_for,
)

ACTIONS = "alt+d mark done · alt+x mark failed · alt+r re-run"


async def _expand_k1(app: Any, pilot: Any) -> HistoryView:
    view, _ = await select_killed_call(app, pilot)
    await pilot.press("enter")
    await settle(pilot)
    return view


async def test_a_settled_call_says_so_stays_selected_and_refuses_a_second_key(
    service: SessionService, frozen: Any
) -> None:
    """After ``alt+d`` the history reloads around the call and keeps it selected, so a
    second key is refused by its binding instead of being typed into the prompt."""
    from textual.widgets import TextArea

    sid = killed_call_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        view = await _expand_k1(app, pilot)
        assert ACTIONS in screen_text(app)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: "marked done by the user" in screen_text(app))
        assert ACTIONS not in screen_text(app)
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
        assert view.selected is not None and view.selected.call_id == "k1"
        await pilot.press("alt+x")
        await settle(pilot)
        assert any("already settled" in s for s in said), said
        assert all(not area.text for area in app.screen.query(TextArea))
    res = [r for r in records(service.get(sid).path) if r["type"] == "tool_resolution"]
    assert [(r["call_id"], r["resolution"]) for r in res] == [("k1", "done")]


async def test_a_denied_rerun_offers_the_actions_again(
    service: SessionService, frozen: Any
) -> None:
    sid = killed_call_session(
        service,
        ("tool_resolution", {"call_id": "k1", "resolution": "rerun", "note": "",
                             "rerun_call_id": "k9"}),
        ("approval_request", {"request_id": "q1", "run_id": "run-2", "tool_calls": [
            {"call_id": "k9", "tool_name": "shell", "arguments": {"command": "make deploy"},
             "risk_level": "high"}]}),
        ("approval_decision", {"request_id": "q1", "decisions": {"k9": "deny"}}),
    )
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _expand_k1(app, pilot)
        assert f"its re-run was denied; it may have run: {ACTIONS}" in screen_text(app)



async def test_a_rerun_that_never_started_offers_the_actions_again(
    service: SessionService, frozen: Any
) -> None:
    """The process ended right after the re-run's resolution: its new call was never
    asked about (a re-run always asks), so nothing ran and the call is unsettled;
    ``alt+d`` settles it."""
    sid = killed_call_session(
        service,
        ("tool_resolution", {"call_id": "k1", "resolution": "rerun", "note": "",
                             "rerun_call_id": "k9"}),
    )
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _expand_k1(app, pilot)
        assert f"its re-run never started; it may have run: {ACTIONS}" in screen_text(app)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: "marked done by the user" in screen_text(app))
    res = [r for r in records(service.get(sid).path) if r["type"] == "tool_resolution"]
    assert [(r["call_id"], r["resolution"]) for r in res] == [("k1", "rerun"), ("k1", "done")]
