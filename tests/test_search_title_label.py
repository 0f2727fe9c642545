"""A search hit on a session's title is labelled as the title, not as message #1."""

from __future__ import annotations

from mttui.screens.search import title_hit
from mttui.session.service import SessionService
from tests.support.tui import msg, write_session


def test_title_hits_are_told_apart(service: SessionService) -> None:
    write_session(service, "Zanzibar plans", [msg("user", "pack the bags", 1),
                                              msg("assistant", "done", 2)])
    write_session(service, "Other", [msg("user", "the zanzibar ferry", 1)])
    hits = {h.session_title: h for h in service.search("zanzibar", scope="project")}
    assert title_hit(hits["Zanzibar plans"])
    assert not title_hit(hits["Other"])
