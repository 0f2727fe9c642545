"""Messages a rewind abandoned are collapsed in the history under one line that opens
on enter; a search hit inside the branch opens it (Pilot, and an SVG snapshot)."""

from __future__ import annotations

from typing import Any

from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, make_app, msg, screen_text, settle, wait_for, write_session

HEADER = "⟲ 4 messages rewound — enter to"


def _rewound(service: SessionService) -> str:
    """#3–#6 abandoned by a rewind to #3; #7–#8 said after it."""
    return write_session(service, "Rewound", [
        msg("user", "start here", 1), msg("assistant", "started", 2),
        msg("user", "take the risky path", 3), msg("assistant", "went the risky way", 4),
        msg("user", "and further", 5), msg("assistant", "deeper down the risky way", 6),
        ("rewind", {"to_seq": 3, "to_message_id": "msg-3", "abandoned_from_seq": 3,
                    "abandoned_to_seq": 6, "thread_id": "thread-b", "op": "op-1"}),
        msg("user", "take the safe path", 7), msg("assistant", "went the safe way", 8),
    ])


async def test_a_rewound_branch_is_one_line_that_opens_and_a_hit_opens_it(
    service: SessionService, frozen: Any
) -> None:
    sid = _rewound(service)
    assert {h.seq for h in service.search("risky", session_id=sid)} == {3, 4, 6}
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert f"{HEADER} show" in text and "risky" not in text
        assert "went the safe way" in text and "started" in text
        view = app.screen.query_one(HistoryView)
        head = view.find(lambda i: i.kind == "rewound")
        assert head is not None
        view.focus()
        await pilot.press("up", "up", "up")  # up from the newest: over the hidden ones
        assert view.selected is head
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert f"{HEADER} hide" in text and "deeper down the risky way" in text
        await pilot.press("enter")
        await settle(pilot)
        assert "risky" not in screen_text(app)
        for seq in (4, 3):  # what a search hit does (#3: the branch's first message)
            head = view.find(lambda i: i.kind == "rewound")
            assert head is not None
            view.select(head)
            if head.expanded:
                await pilot.press("enter")
                await settle(pilot)
            assert "risky" not in screen_text(app)
            view.load_around(seq)
            await wait_for(pilot, lambda: "went the risky way" in screen_text(app))
            assert f"{HEADER} hide" in screen_text(app)


def test_snapshot_rewound_branch_collapsed(snap_compare: Any, service: SessionService,
                                           frozen: Any) -> None:
    sid = _rewound(service)

    async def before(pilot: Any) -> None:
        await quiet(pilot)

    assert snap_compare(make_app(service, open_session=sid), terminal_size=SIZE,
                        run_before=before)
