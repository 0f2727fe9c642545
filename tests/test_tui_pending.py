"""The pending-input lane in the chat: queue while busy, steer, edit, move, delete,
held after a restart with Resume queue, a steer never delivered; SVG snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mttui.session.pending import CAPACITY, NOT_DELIVERED, Lane
from mttui.session.service import SessionService
from mttui.widgets.pending_lane import EditQueuedScreen, PendingLane
from mttui.widgets.prompt import PromptArea
from tests.support.clock import FrozenClock
from tests.support.snapshots import quiet
from tests.support.tui import (
    SIZE,
    WAIT_FOR_GO,
    lane_ops_done,
    lane_texts,
    make_app,
    msg,
    screen_text,
    session_records,
    settings,
    settle,
    type_and,
    wait_for,
    write_session,
)


async def test_queue_and_steer_while_busy(service: SessionService, project: Path) -> None:
    app = make_app(service, open_browser=False, settings=settings(approval="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await type_and(pilot, WAIT_FOR_GO, "enter")
        await wait_for(pilot, lambda: chat.chat.writer is not None and b'"tool_dispatch"'
                       in chat.chat.writer.path.read_bytes())  # fmt: skip
        lane = chat.query_one(PendingLane)
        assert not lane.has_class("-visible")  # nothing pending: no lane
        await type_and(pilot, "then summarize", "enter")
        await wait_for(pilot, lambda: lane_texts(chat) == [("then summarize", "waiting")])
        assert lane.has_class("-visible") and chat.query_one("#prompt", PromptArea).text == ""
        for n in range(CAPACITY - 1):
            await type_and(pilot, f"filler {n}", "enter")
        await wait_for(pilot, lambda: len(lane.rows) == CAPACITY)
        await type_and(pilot, "one too many", "enter")
        await wait_for(pilot, lambda: lane_ops_done(app))
        await pilot.pause()
        assert len(lane.rows) == CAPACITY  # refused: the text stays in the prompt
        assert chat.query_one("#prompt", PromptArea).text == "one too many"
        for n in range(CAPACITY - 1):  # delete the fillers from the lane (shift+tab, d)
            lane.cursor = 1
            lane.focus()
            await pilot.press("d")
            await wait_for(pilot, lambda n=n: len(lane.rows) == CAPACITY - 1 - n)
        await type_and(pilot, "look at the README too", "ctrl+s")
        await wait_for(pilot, lambda: ("look at the README too", "unread") in lane_texts(chat))
        await pilot.press("ctrl+r")  # pause: the queued item waits after this run
        await wait_for(pilot, lambda: lane.held)
        (project / "go").write_text("")
        await wait_for(pilot, lambda: chat.state == "idle" and not chat.busy
                       and lane_texts(chat) == [("then summarize", "held")])  # fmt: skip
        await pilot.press("ctrl+r")  # resume: it runs now
        await wait_for(pilot, lambda: chat.state == "idle" and not chat.busy
                       and not lane.rows)  # fmt: skip
        sid = chat.chat.session_id
    users = [(m.content, m.status) for m in service.history(sid).messages if m.role == "user"]
    assert users == [(WAIT_FOR_GO, "sent"), ("look at the README too", "sent"),
                     ("then summarize", "sent")]  # fmt: skip
    roles = [m.role for m in service.history(sid).messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant", "user", "assistant"]
    assert len(session_records(service, sid, "pending_read")) == 1
    assert len(session_records(service, sid, "pending_take")) == 1


async def test_held_after_restart_then_resume_queue(service: SessionService) -> None:
    sid = write_session(service, "Queued before", [
        msg("user", "Draft the notes.", 1), msg("assistant", "Done.", 2),
        ("pending_add", {"item_id": "p1", "mode": "queue", "text": "Mention the demo."}),
        ("pending_add", {"item_id": "p2", "mode": "queue", "text": "Shorter, please."})])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        lane = chat.query_one(PendingLane)
        assert lane_texts(chat) == [("Mention the demo.", "held"), ("Shorter, please.", "held")]
        assert lane.held and "Resume queue" in screen_text(app)
        await pilot.pause()
        assert session_records(service, sid, "run_start") == []  # opening never drains
        # alt+up on the empty prompt edits the last queued item
        chat.query_one("#prompt", PromptArea).focus()
        await pilot.press("alt+up")
        await wait_for(pilot, lambda: isinstance(app.screen, EditQueuedScreen))
        edit = app.screen.query_one(PromptArea)
        edit.text = "Shorter, five lines."
        await pilot.press("enter")
        await wait_for(pilot, lambda: ("Shorter, five lines.", "held") in lane_texts(chat))
        # a send while idle runs at once (a steer while idle is a normal send); the held
        # items stay held
        await type_and(pilot, "a question first", "ctrl+s")
        await wait_for(pilot, lambda: chat.state == "idle" and
                       len(session_records(service, sid, "run_end")) == 1)
        await settle(pilot)
        assert [s for _, s in lane_texts(chat)] == ["held", "held"]
        await pilot.click("#lane-resume")  # the visible Resume queue action
        await wait_for(pilot, lambda: len(session_records(service, sid, "run_end")) == 3
                       and chat.state == "idle")  # fmt: skip
        await settle(pilot)
        assert not lane.has_class("-visible")
    taken = [r["message"]["content"] for r in session_records(service, sid, "pending_take")]
    assert taken == ["Mention the demo.", "Shorter, five lines."]


async def test_a_steer_never_delivered_is_sent_again(service: SessionService) -> None:
    sid = write_session(service, "Stopped mid-run", [
        msg("user", "Refactor it.", 1), msg("assistant", "Working on it.", 2),
        ("pending_steer", {"item_id": "s1", "mode": "steer", "text": "keep the API",
                           "message": {"id": "msg-s1", "role": "user",
                                       "content": "keep the API", "status": "pending"}})])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        lane = chat.query_one(PendingLane)
        assert lane_texts(chat) == [("keep the API", "failed")]
        assert "not delivered" in screen_text(app)
        lane.focus()
        await pilot.press("r")  # sends it again as a new normal message
        await wait_for(pilot, lambda: len(session_records(service, sid, "run_end")) == 1
                       and chat.state == "idle")  # fmt: skip
        await settle(pilot)
        assert not lane.rows
    update = session_records(service, sid, "message_update")[0]
    assert update["message_id"] == "msg-s1" and update["status"] == "error"
    assert update["error"] == NOT_DELIVERED
    users = [(m.content, m.status) for m in service.history(sid).messages if m.role == "user"]
    assert users == [("Refactor it.", "sent"), ("keep the API", "error"),
                     ("keep the API", "sent")]  # fmt: skip


# -- snapshots ----------------------------------------------------------------------------
def _lane_session(service: SessionService) -> str:
    return write_session(service, "Write the release notes", [
        msg("user", "Draft release notes for 0.1.", 1),
        msg("assistant", "## mttui 0.1\n\n- durable sessions\n- search", 2),
        ("pending_add", {"item_id": "p1", "mode": "queue", "text": "Mention the demo."}),
        ("pending_add", {"item_id": "p2", "mode": "queue", "text": "Run the spell checker."}),
        ("pending_add", {"item_id": "p3", "mode": "queue", "text": "Shorter, please."}),
        ("pending_fail", {"item_id": "p2", "error": "connection refused"})])


def test_lane_held_with_resume_queue(snap_compare: Any, service: SessionService,
                                     frozen: FrozenClock) -> None:
    """Reopened with items waiting: held, a Resume queue action, a needs-retry item."""
    sid = _lane_session(service)
    app = make_app(service, open_session=sid)
    assert snap_compare(app, terminal_size=SIZE, run_before=quiet)


def test_lane_while_busy(snap_compare: Any, service: SessionService,
                         frozen: FrozenClock) -> None:
    """A busy run's lane, focused: waiting items, an unread and a read steer receipt."""
    sid = _lane_session(service)
    lane_state = Lane.fold([
        {"type": "pending_add", "item_id": "q1", "text": "Then update the changelog."},
        {"type": "pending_add", "item_id": "q2", "text": "And tag the release."},
        {"type": "pending_steer", "item_id": "s1", "text": "Mention Python 3.11+.",
         "message": {"id": "m1"}},
        {"type": "pending_steer", "item_id": "s2", "text": "Use British spelling.",
         "message": {"id": "m2"}},
        {"type": "pending_read", "item_ids": ["s1"], "message_ids": ["m1"]},
    ])  # fmt: skip
    rows = lane_state.view() + [lane_state.items["s1"].as_json(None)]

    async def run_before(pilot: Any) -> None:
        await quiet(pilot)
        lane = pilot.app.screen.query_one(PendingLane)
        lane.show(rows, held=False)
        lane.focus()
        await pilot.press("down")
        await quiet(pilot)

    app = make_app(service, open_session=sid)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_rows_that_arrive_while_the_lane_is_torn_down_are_dropped_quietly() -> None:
    """A lane worker's rows can arrive while the chat screen closes (its children are
    removed first): they have nothing to be drawn into, and must not crash the app."""
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield PendingLane(id="pending-lane")

    row = {"id": "q1", "mode": "queue", "position": 1, "state": "queued", "text": "later"}
    app = One()
    async with app.run_test() as pilot:
        lane = app.query_one(PendingLane)
        lane.show([row], held=False)
        await pilot.pause()
        assert lane.has_class("-visible")
        await lane.remove_children()  # as when its screen is closing
        lane.show([row, {**row, "id": "q2", "position": 2}], held=True)
        await pilot.pause()
        assert app.return_code is None and app.is_running  # not crashed
