"""A model error is shown once in the chat (as the error message, not again as a notice)."""

from __future__ import annotations

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.fake_openai import closed_port_url
from tests.support.tui import SIZE, make_app, send, settings, settle, wait_for


async def test_a_model_error_is_shown_once(service: SessionService) -> None:
    app = make_app(service, open_browser=False, settings=settings(
        provider="openai", model="m", base_url=closed_port_url(), max_retries=0))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send(pilot, "hello")
        await wait_for(pilot, lambda: app.screen.state == "idle"
                       and any(i.status == "error" for i in
                               app.screen.query_one(HistoryView).items))
        await settle(pilot)
        items = app.screen.query_one(HistoryView).items
        errors = [i for i in items if i.status == "error"]
        assert len(errors) == 1, [(i.kind, i.text) for i in errors]
