"""A fork killed between creating its log and finishing its copy and seed is marked
incomplete: ``sessions --json`` says ``incomplete``, ``doctor`` names it with what to
do, writing to it is refused, the browser says so and opens it read-only; ``fork ID
--finish`` makes it again (complete) and ``delete`` removes it. Real ``mttui``
processes SIGKILLed at named points (``support/fault_entry.py``), both fork paths (the
raw-line copy, and the folding one a queued input forces); the index equals a rebuild."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mttui.screens.chat import ChatScreen
from mttui.session.index.ingest import build_index
from mttui.session.service import SessionService
from tests.support import zygote
from tests.support.index_dump import logical_dump
from tests.support.resume import cli, env
from tests.support.timetravel import run_json
from tests.support.tui import SIZE, make_app, msg, screen_text, settle, write_session


def _source(service: SessionService, *, fold: bool) -> str:
    records = [msg("user" if i % 2 else "assistant", f"message {i}", i) for i in range(1, 9)]
    sid = write_session(service, "The source", records)
    if fold:  # a pending input: the fast copy does not apply
        with service.open_writer(sid) as w:
            w.append("pending_add", item_id="q1", mode="queue", text="later", position=0)
    service.close()
    return sid


def _killed_fork(home: Path, project: Path, sid: str, point: str) -> str:
    proc = zygote.run("fault", ["fork", sid, "--json"], cwd=project,
                      env=env(home, MTTUI_FAULT=point))
    assert proc.returncode == -9, proc.stderr
    listed = run_json(home, project, "sessions")["sessions"]
    (made,) = [s for s in listed if s["id"] != sid]
    assert made["incomplete"] is True  # never listed as a complete fork
    assert made["forked_from"] == {"session_id": sid, "seq": 8}
    return str(made["id"])


def _equals_rebuild(home: Path, project: Path, tmp: Path) -> None:
    service = SessionService(home, project)
    service.close()
    tmp.mkdir(exist_ok=True)
    build_index(service.layout, tmp / "rebuilt.sqlite")
    assert logical_dump(service.layout.index_path) == logical_dump(tmp / "rebuilt.sqlite")


@pytest.mark.parametrize("fold", [False, True], ids=["copy", "fold"])
@pytest.mark.parametrize("point", ["after:session_start", "before:session_update"])
def test_a_killed_fork_is_incomplete_and_can_be_finished(
    home: Path, project: Path, service: SessionService, tmp_path: Path, fold: bool,
    point: str,
) -> None:
    sid = _source(service, fold=fold)
    made = _killed_fork(home, project, sid, point)
    _equals_rebuild(home, project, tmp_path / "a")
    doctor = cli(home, project, "doctor")
    assert doctor.returncode == 1
    (line,) = [x for x in doctor.stdout.splitlines() if made in x and "fork_incomplete" in x]
    assert f"mttui fork {made} --finish" in line and f"mttui delete {made}" in line
    problems = run_json(home, project, "doctor", code=1).stdout
    assert {"session_id": made, "code": "fork_incomplete"}.items() <= next(
        p for p in json.loads(problems)["problems"] if p["session_id"] == made).items()
    check = run_json(home, project, "resume-check", made)
    assert (check["mode"], check["refusal"]["code"]) == ("refused", "fork_incomplete")
    refused = cli(home, project, "exec", "--session", made, "go on")
    assert refused.returncode == 1 and "incomplete fork" in refused.stderr, refused.stderr
    done = run_json(home, project, "fork", made, "--finish")
    assert done["replaced"] == made and done["messages"] == 8
    assert done["forked_from"] == {"session_id": sid, "seq": 8}
    listed = {s["id"]: s for s in run_json(home, project, "sessions")["sessions"]}
    assert made not in listed and listed[done["session_id"]]["incomplete"] is False
    assert listed[done["session_id"]]["message_count"] == 8
    assert cli(home, project, "doctor").returncode == 0
    again = cli(home, project, "fork", done["session_id"], "--finish")
    assert again.returncode == 1 and "not an incomplete fork" in again.stderr
    _equals_rebuild(home, project, tmp_path / "b")


def test_a_killed_fork_can_be_deleted(
    home: Path, project: Path, service: SessionService, tmp_path: Path
) -> None:
    sid = _source(service, fold=False)
    made = _killed_fork(home, project, sid, "before:session_update")
    r = cli(home, project, "delete", made, "--yes")
    assert r.returncode == 0, r.stderr
    listed = [s["id"] for s in run_json(home, project, "sessions")["sessions"]]
    assert listed == [sid]
    assert not list(home.glob(f"history/*/session-*-{made}.jsonl"))
    _equals_rebuild(home, project, tmp_path)


async def test_the_browser_says_incomplete_and_the_chat_is_read_only(
    home: Path, project: Path, service: SessionService, frozen: Any
) -> None:
    sid = _source(service, fold=False)
    made = _killed_fork(home, project, sid, "after:session_start")
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        shown = screen_text(app)
        rows = [line.split("▏")[0] for line in shown.splitlines()]
        (row,) = [r for r in rows if "incomplete fork" in r]
        assert "⑂!" in row
        assert "⑂ incomplete" in shown and "--finish" in shown  # the preview: what to do
        assert "execution" not in shown  # its resume is not offered as a plain one
    app = make_app(service, open_session=made)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen) and chat.state == "read-only"
        assert "incomplete fork" in str(chat.chat.read_only)
        await pilot.pause(1.5)  # the lock probe finds nobody writing: still read-only
        assert chat.state == "read-only"


def test_an_index_of_schema_12_gains_the_column(
    home: Path, project: Path, service: SessionService
) -> None:
    import sqlite3

    sid = _source(service, fold=False)
    old = sqlite3.connect(service.layout.index_path)
    old.isolation_level = None
    old.execute("ALTER TABLE sessions DROP COLUMN fork_incomplete")  # what schema 12 held
    old.execute("PRAGMA user_version = 12")
    old.close()
    made = _killed_fork(home, project, sid, "after:session_start")
    again = SessionService(home, project)
    assert {s.id: s.fork_incomplete for s in again.list_sessions().sessions} == {
        sid: False, made: True}


@pytest.mark.parametrize("args", [("queue", "add", "{id}", "later"), ("rename", "{id}", "x"),
                                  ("compact", "{id}"),
                                  ("rewind", "{id}", "--to", "1", "--conversation", "--yes")])
def test_an_incomplete_fork_is_not_written_to(
    home: Path, project: Path, service: SessionService, args: tuple[str, ...]
) -> None:
    sid = _source(service, fold=False)
    made = _killed_fork(home, project, sid, "before:session_update")
    path = next(home.glob(f"history/*/session-*-{made}.jsonl"))
    before = path.read_bytes()
    r = cli(home, project, *(a.format(id=made) for a in args))
    assert r.returncode == 1 and "incomplete fork" in r.stderr, (r.returncode, r.stderr)
    assert path.read_bytes() == before
    shown = cli(home, project, "sessions")
    assert "⑂ incomplete" in next(x for x in shown.stdout.splitlines() if made in x)
