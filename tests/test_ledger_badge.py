"""The ``⚠`` badge counts only unsettled calls: it follows ``mttui ledger … mark-done``
and a re-run denied at its approval leaves the old call unsettled (real CLI processes,
the scripted server, the browser through Pilot, the index compared with a rebuild)."""

from __future__ import annotations

from pathlib import Path

from mttui.session.index.ingest import build_index
from mttui.session.service import SessionService
from mttui.widgets.session_table import SessionTable
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.index_dump import logical_dump
from tests.support.resume import cli
from tests.support.timetravel import run_json
from tests.support.tui import SIZE, make_app, settle


def _interrupted(service: SessionService, *calls: tuple[str, bool]) -> str:
    """A session whose shell calls were dispatched and never finished; ``True``: a resume
    already closed that call as interrupted (its outcome and closing result logged)."""
    w = service.create_session(provider="offline", model="m", title="killed mid-run")
    w.append("transcript_message", message={"id": "msg-u", "role": "user",
                                            "content": "make files", "status": "sent"})
    w.append("run_start", run_id="r1")
    w.append("transcript_message", message={
        "id": "msg-a", "role": "assistant", "content": "", "status": "sent",
        "tool_calls": [{"id": c, "name": "shell", "args": {"command": f"touch {c}"}}
                       for c, _ in calls]})
    for c, closed in calls:
        w.append("tool_dispatch", run_id="r1", call_id=c, tool_name="shell",
                 arguments_sha256="x")
        if closed:
            w.append("tool_outcome", run_id="r1", call_id=c, status="interrupted")
            w.append("transcript_message", message={
                "id": f"msg-{c}", "role": "tool", "content": "interrupted: not run again",
                "tool_call_id": c, "name": "shell", "status": "interrupted"})
    w.close()
    return w.session_id


def _badge(home: Path, project: Path, sid: str) -> int:
    found = {s["id"]: s for s in run_json(home, project, "sessions")["sessions"]}
    return int(found[sid]["status"]["interrupted_tools"])


def _equals_rebuild(service: SessionService, tmp: Path) -> None:
    service.close()
    build_index(service.layout, tmp / "rebuilt.sqlite")
    assert logical_dump(service.layout.index_path) == logical_dump(tmp / "rebuilt.sqlite")


async def _browser_badge(service: SessionService) -> str:
    """The browser's row of the (only) session."""
    service.close()
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        assert table.sessions
        return " ".join(str(cell) for cell in table.row_cells(0))


async def test_the_badge_drops_as_calls_are_settled(
    home: Path, project: Path, service: SessionService, tmp_path: Path
) -> None:
    sid = _interrupted(service, ("k1", False), ("k2", True))
    assert _badge(home, project, sid) == 2  # open, and closed as interrupted by a resume
    assert "⚠2" in (await _browser_badge(service)).replace(" ", "")
    run_json(home, project, "ledger", sid, "k1", "mark-done")
    assert _badge(home, project, sid) == 1
    run_json(home, project, "ledger", sid, "k2", "mark-failed", "--note", "not there")
    assert _badge(home, project, sid) == 0
    assert [c["state"] for c in run_json(home, project, "ledger", sid)["calls"]] == [
        "done", "failed"]
    assert "⚠" not in await _browser_badge(service)
    _equals_rebuild(service, tmp_path)


async def test_a_denied_rerun_leaves_the_call_interrupted(
    home: Path, project: Path, service: SessionService, tmp_path: Path,
    fake_openai: FakeOpenAI,
) -> None:
    sid = _interrupted(service, ("k3", True))
    keys = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test",
            "MTTUI_PROVIDER": "openai"}
    fake_openai.add(text("understood, not run"))
    r = cli(home, project, "ledger", sid, "k3", "rerun", "--approve", "none", **keys)
    assert r.returncode == 0, r.stderr
    (call,) = run_json(home, project, "ledger", sid)["calls"]
    assert call["state"] == "interrupted"
    assert call["rerun"]["state"] == "denied" and call["rerun"]["call_id"] != "k3"
    assert not (project / "k3").exists()
    assert _badge(home, project, sid) == 1
    assert "⚠" in await _browser_badge(service)
    run_json(home, project, "ledger", sid, "k3", "mark-done")
    assert _badge(home, project, sid) == 0
    _equals_rebuild(service, tmp_path)
