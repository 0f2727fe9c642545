"""Forks in the session browser: the ``⑂`` badge, and the parent's title in the preview."""

from __future__ import annotations

from typing import Any

from mttui.core.fork import fork
from mttui.session.service import SessionService
from tests.support.tui import SIZE, make_app, msg, screen_text, settings, settle, write_session


async def test_a_fork_has_a_badge_and_names_its_parent(service: SessionService,
                                                       frozen: Any) -> None:
    sid = write_session(service, "The original", [msg("user", "start", 1),
                                                  msg("assistant", "ok", 2)])
    forked = fork(service, settings(), sid, title="Another way")
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        shown = screen_text(app)
        rows = {title: line.split("▏")[0] for line in shown.splitlines()
                for title in ("Another way", "The original")
                if line.lstrip().startswith(title)}
        assert "⑂" in rows["Another way"] and "⑂" not in rows["The original"]
        assert "⑂ fork of The original at #2" in shown
    listed = {s.id: s for s in service.list_sessions().sessions}
    assert listed[forked.session_id].forked_from() == {"session_id": sid, "seq": 2}
    assert listed[sid].forked_from() is None
