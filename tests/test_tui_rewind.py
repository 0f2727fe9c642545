"""The rewind picker in the chat (Pilot): esc esc opens it, the preview lists the files,
``b`` rewinds both and puts the message back in the prompt; ``/rewind undo``; ``/fork``
opens the fork; ``d`` settles an interrupted call selected in the history."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mttui.screens.chat import ChatScreen
from mttui.screens.rewind import RewindScreen
from mttui.session.service import SessionService
from mttui.session.snapshots import ShadowRepo
from mttui.widgets.prompt import PromptArea
from tests.support.logs import records
from tests.support.snapshots import quiet
from tests.support.tui import (
    SIZE,
    killed_call_session,
    make_app,
    msg,
    screen_text,
    select_killed_call,
    settle,
    wait_for,
    write_session,
)


def _session(service: SessionService, project: Path, home: Path) -> str:
    """Turn 1 talks; turn 2 (message 3) changed a.txt and created new.txt after the
    snapshot taken before its first side effect."""
    (project / "a.txt").write_text("one\n")
    ref = ShadowRepo(home, project).snapshot().ref
    call = {"id": "c1", "name": "shell", "args": {"command": "echo two > a.txt; touch new.txt"}}
    sid = write_session(service, "Rewind me", [
        msg("user", "hello", 1), msg("assistant", "hi", 2),
        ("run_start", {"run_id": "run-2"}),
        msg("user", "change a", 3),
        ("file_checkpoint", {"run_id": "run-2", "before_seq": 3, "ref": ref, "files": 1,
                             "skipped": []}),
        msg("assistant", "", 4, tool_calls=[call]),
        ("tool_dispatch", {"run_id": "run-2", "call_id": "c1", "tool_name": "shell",
                           "arguments_sha256": "x"}),
        ("tool_outcome", {"run_id": "run-2", "call_id": "c1", "status": "success"}),
        msg("tool", "", 5, tool_call_id="c1", name="shell"),
        msg("assistant", "changed", 6),
        ("run_end", {"run_id": "run-2", "status": "completed"}),
    ])
    (project / "a.txt").write_text("two\n")
    (project / "new.txt").write_text("")
    return sid


async def _open_picker(pilot: Any) -> None:
    await settle(pilot)
    await pilot.press("escape", "escape")
    await settle(pilot)
    assert isinstance(pilot.app.screen, RewindScreen)


async def test_esc_esc_picks_previews_and_rewinds_both(
    service: SessionService, project: Path, home: Path, frozen: Any
) -> None:
    sid = _session(service, project, home)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _open_picker(pilot)
        shown = screen_text(app)
        assert shown.index("#3") < shown.index("#1")  # newest first
        assert "2 file(s): a.txt, new.txt" in shown
        await pilot.press("enter")
        await settle(pilot)
        shown = screen_text(app)
        assert "restore  a.txt" in shown and "delete   new.txt" in shown
        assert (project / "a.txt").read_text() == "two\n"  # a preview changes nothing
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await settle(pilot)
        assert app.screen.query_one(PromptArea).text == "change a"
        assert app.screen.query_one(PromptArea).cursor_location == (0, 8)
        assert "⟲ 4 messages rewound — enter to show" in screen_text(app)
        assert (project / "a.txt").read_text() == "one\n" and not (project / "new.txt").exists()
        kinds = [r["type"] for r in records(service.get(sid).path)]
        assert kinds[-4:] == ["rewind_start", "rewind_end", "rewind", "session_update"]
        prompt = app.screen.query_one(PromptArea)
        prompt.text = "/rewind undo"
        await pilot.press("enter")
        await wait_for(pilot, lambda: (project / "new.txt").exists())
        await settle(pilot)
        assert "rewind undone: #3–#6 are back" in screen_text(app)
        assert (project / "a.txt").read_text() == "two\n"
        prompt.text = "/fork"
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(service.list_sessions().sessions) == 2)
        await settle(pilot)
        forks = [s for s in service.list_sessions().sessions if s.id != sid]
        assert forks[0].forked_from() == {"session_id": sid, "seq": 6}


async def test_escape_leaves_the_picker_step_by_step(
    service: SessionService, project: Path, home: Path, frozen: Any
) -> None:
    sid = _session(service, project, home)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _open_picker(pilot)
        await pilot.press("b")  # nothing chosen yet: nothing happens
        await settle(pilot)
        await pilot.press("enter", "escape")
        await settle(pilot)
        assert isinstance(app.screen, RewindScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        prompt = app.screen.query_one(PromptArea)
        prompt.text = "typed"
        await pilot.press("escape", "escape")  # not empty: no picker
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen) and prompt.text == "typed"
    assert (project / "a.txt").read_text() == "two\n"
    assert not [r for r in records(service.get(sid).path) if r["type"].startswith("rewind")]


async def test_alt_d_marks_a_selected_interrupted_call_done(
    service: SessionService, project: Path, home: Path, frozen: Any
) -> None:
    sid = killed_call_session(service)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        _, item = await select_killed_call(app, pilot)
        assert item.status == "interrupted"
        await pilot.press("enter")  # expanded: the ledger's actions are listed
        await settle(pilot)
        assert "alt+d mark done · alt+x mark failed · alt+r re-run" in screen_text(app)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: any(
            r["type"] == "tool_resolution" for r in records(service.get(sid).path)))
        await settle(pilot)
    res = [r for r in records(service.get(sid).path) if r["type"] == "tool_resolution"]
    assert [(r["call_id"], r["resolution"]) for r in res] == [("k1", "done")]


def test_snapshot_rewind_preview(snap_compare: Any, service: SessionService, project: Path,
                                 home: Path, frozen: Any) -> None:
    """The picker with the preview of a rewind to #3 (files and the diff summary)."""
    sid = _session(service, project, home)

    async def before(pilot: Any) -> None:
        await _open_picker(pilot)
        await pilot.press("enter")
        await quiet(pilot)

    assert snap_compare(make_app(service, open_session=sid), terminal_size=SIZE,
                        run_before=before)


async def test_alt_r_reruns_a_selected_interrupted_call_after_a_new_approval(
    service: SessionService, project: Path, home: Path, frozen: Any
) -> None:
    sid = killed_call_session(service, command="echo hi >> hi.txt", ask="say hi")
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await select_killed_call(app, pilot)
        await pilot.press("alt+r")
        await wait_for(pilot, lambda: app.screen.state == "awaiting approval")
        assert not (project / "hi.txt").exists()  # asked first
        app.screen.focus_approval()
        await pilot.press("1")
        await wait_for(pilot, lambda: (project / "hi.txt").exists()
                       and app.screen.state == "idle")
        await settle(pilot)
    assert (project / "hi.txt").read_text() == "hi\n"
    log = records(service.get(sid).path)
    assert [(r["call_id"], r["resolution"]) for r in log if r["type"] == "tool_resolution"] == [
        ("k1", "rerun")]
    assert [r["type"] for r in log].count("approval_decision") == 1


async def test_escape_goes_back_a_step_while_the_preview_is_still_read(
    service: SessionService, project: Path, home: Path, frozen: Any
) -> None:
    # enter then escape at once: the preview (a worker) had not come, and escape
    # closed the whole picker instead of going back to the list
    sid = _session(service, project, home)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _open_picker(pilot)
        picker = app.screen
        assert isinstance(picker, RewindScreen)
        gate = threading.Event()
        read = picker._preview

        def slow(seq: int) -> Any:
            gate.wait(30)
            return read(seq)

        picker._preview = slow
        await pilot.press("enter")
        assert picker.chosen_seq is not None and picker.chosen is None
        await pilot.press("b")  # not read yet: nothing is done
        await pilot.press("escape")
        assert app.screen is picker and picker.chosen_seq is None
        gate.set()
        await settle(pilot)
        assert app.screen is picker and picker.chosen is None  # the late preview: ignored
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
    assert (project / "a.txt").read_text() == "two\n"
    assert not [r for r in records(service.get(sid).path) if r["type"].startswith("rewind")]
