"""A search hit inside a tool's output opens that tool block expanded, the match shown."""

from __future__ import annotations

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.tui import SIZE, make_app, msg, screen_text, settle, write_session


async def test_a_hit_in_a_tool_output_expands_it(service: SessionService) -> None:
    sid = write_session(service, "Tool", [
        msg("user", "run it", 1),
        msg("assistant", "", 2, tool_calls=[{"id": "c1", "name": "shell",
                                             "args": {"command": "cat log"}}]),
        msg("tool", "line one\nthe zanzibar error\nline three", 3, tool_call_id="c1",
            name="shell"),
        msg("assistant", "done", 4),
    ])
    app = make_app(service, open_session=sid, around=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        view = app.screen.query_one(HistoryView)
        tool = next(it for it in view.items if it.kind == "tool")
        assert tool.expanded
        assert "the zanzibar error" in screen_text(app)
