"""A re-run killed right after its ``tool_resolution`` (before the new call ran) can still
be settled: the old call is listed as interrupted again, the ``⚠`` badge counts it, and
it can be re-run or marked done (real processes, a real SIGKILL at that point)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.session.service import SessionService
from tests.support import zygote
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.index_dump import logical_dump
from tests.support.logs import records
from tests.support.resume import cli, env
from tests.support.timetravel import run_json


def _killed_rerun(home: Path, project: Path, fake: FakeOpenAI,
                  point: str = "after:tool_resolution") -> str:
    fake.add(tools([("k9", "shell", {"command": "echo hi >> hi.txt"})]))
    keys = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}
    proc = zygote.run("fault", ["exec", "--approve", "all", "make hi"], cwd=project,
                      env=env(home, MTTUI_FAULT="after:tool_dispatch", **keys))
    assert proc.returncode == -9
    sid = SessionService(home, project).resolve("last").id
    proc = zygote.run("fault", ["ledger", sid, "k9", "rerun", "--approve", "all"], cwd=project,
                      env=env(home, MTTUI_FAULT=point, **keys))
    assert proc.returncode == -9, proc.stderr
    log = records(SessionService(home, project).resolve(sid).path)
    assert [r["resolution"] for r in log if r["type"] == "tool_resolution"] == ["rerun"]
    return sid


def _badge(home: Path, project: Path, sid: str) -> int:
    found = {s["id"]: s for s in run_json(home, project, "sessions")["sessions"]}
    return int(found[sid]["status"]["interrupted_tools"])


def _equals_rebuild(home: Path, project: Path, tmp: Path) -> None:
    from mttui.session.index.ingest import build_index

    service = SessionService(home, project)
    service.close()
    tmp.mkdir(exist_ok=True)
    build_index(service.layout, tmp / "rebuilt.sqlite")
    assert logical_dump(service.layout.index_path) == logical_dump(tmp / "rebuilt.sqlite")


@pytest.mark.parametrize("point", ["after:tool_resolution", "after:run_start"])
def test_a_rerun_killed_before_its_call_ran_can_be_marked_done(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path, point: str
) -> None:
    sid = _killed_rerun(home, project, fake_openai, point)
    (call,) = run_json(home, project, "ledger", sid)["calls"]
    assert call["state"] == "interrupted"
    assert call["rerun"]["state"] == "not_started"
    assert _badge(home, project, sid) == 1
    _equals_rebuild(home, project, tmp_path)
    done = run_json(home, project, "ledger", sid, "k9", "mark-done", "--note", "checked")
    assert done["call"]["state"] == "done"
    assert _badge(home, project, sid) == 0
    # a resume afterwards runs nothing: the new call was never approved
    keys = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    fake_openai.add(text("ok"))
    r = cli(home, project, "exec", "--resume", sid, "--approve", "all", **keys)
    assert r.returncode == 0, r.stderr
    log = records(SessionService(home, project).resolve(sid).path)
    assert [r["call_id"] for r in log if r["type"] == "tool_dispatch"] == ["k9"]  # never re-run
    assert _badge(home, project, sid) == 0
    _equals_rebuild(home, project, tmp_path / "again")


def test_a_rerun_killed_before_its_call_ran_can_be_rerun(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    sid = _killed_rerun(home, project, fake_openai)
    keys = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    fake_openai.add(text("ran it again"))
    r = cli(home, project, "ledger", sid, "k9", "rerun", "--approve", "all", **keys)
    assert r.returncode == 0, r.stderr
    (call,) = run_json(home, project, "ledger", sid)["calls"]
    assert (call["state"], call["rerun"]["state"]) == ("rerun", "approved")
    assert _badge(home, project, sid) == 0
    assert (project / "hi.txt").read_text().count("hi") in (1, 2)  # ran once more at most
    log = records(SessionService(home, project).resolve(sid).path)
    news = [r for r in log if r["type"] == "tool_dispatch" and r["call_id"] != "k9"]
    assert len(news) == 1  # the new call ran once
    _equals_rebuild(home, project, tmp_path)
