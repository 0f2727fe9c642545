"""A full disk at every write of an approved tool turn never runs a tool twice.

``support/disk_full.py`` makes the N-th durable write of ``mttui exec`` fail as on
a full disk (log appends cut short with ENOSPC, SQLite "database or disk is
full"), for every N of one approved shell turn, in two ways: every write from the
N-th on fails (the disk stays full), or only the N-th (a little space came back).
Then space returns and the session is continued with one more message. Every
time: the tool ran at most once, every call has at most one dispatch and one
outcome, a decided approval is not asked again, the new turn completes, and the
failure said the disk is full. ``exec`` runs in this process (as ``main()``), so
the cases cost no interpreter start.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mttui.session.records import parse_session_filename
from tests.support.disk_full import exec_here
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records as log_records

MARK = "echo ran >> runs.txt; echo done-once"


def _session(home: Path) -> tuple[str, Path] | None:
    found = [p for p in home.glob("history/*/session-*.jsonl") if p.stat().st_size]
    if not found:
        return None
    named = parse_session_filename(found[-1].name)
    assert named is not None
    return named[1], found[-1]


def _one_case(exec_: Any, fake: FakeOpenAI, home: Path, project: Path, at: int, only: bool,
              label: str) -> None:
    for leftover in home.glob("history/*/session-*"):
        leftover.unlink()
    (project / "runs.txt").unlink(missing_ok=True)
    fake.script.clear()
    fake.add(tools([("call_a", "shell", {"command": MARK})]), text("first done"))
    code, events, err = exec_("--approve", "all", "run the marker", full_at=at, only=only)
    where = f"disk full at write {at} ({label}, {'only' if only else 'from'}): {code} {err!r}"
    assert code in (0, 1), where
    if code == 1:
        assert "disk is full" in err and "Traceback" not in err, where
    found = _session(home)
    if found is None:
        assert code == 1, where  # no session: the first write failed
        return
    sid, path = found
    decided = {r.get("request_id") for r in log_records(path, "approval_decision")}
    fake.script.clear()
    fake.add(text("resumed"), text("continued"), text("more"))
    code, events, err = exec_("--session", sid, "--approve", "all", "and again")
    assert code == 0, (where, "continue", err, events)
    asked = [e for e in events if e["event"] == "approval_request"]
    assert not [e for e in asked if e["request_id"] in decided], (where, asked)
    ends = [e for e in events if e["event"] == "run_end"]
    assert ends and ends[-1]["status"] == "completed", (where, events)
    records = log_records(path)
    marker = project / "runs.txt"
    runs = marker.read_text().count("ran") if marker.exists() else 0
    outcomes = Counter(r.get("call_id") for r in records if r["type"] == "tool_outcome")
    dispatched = Counter(r.get("call_id") for r in records if r["type"] == "tool_dispatch")
    assert runs <= 1 and runs <= dispatched["call_a"], (where, runs, records)
    assert all(n == 1 for n in outcomes.values()), (where, outcomes)
    assert all(n == 1 for n in dispatched.values()), (where, dispatched)
    assert outcomes["call_a"] == 1 or "call_a" not in dispatched, (where, outcomes)


def test_disk_full_at_every_write_of_an_approved_tool_turn(
    fake_openai: FakeOpenAI, home: Path, project: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    exec_ = exec_here(home, project, fake_openai, capsys, monkeypatch)
    trace = tmp_path / "trace.txt"
    fake_openai.add(tools([("call_t", "shell", {"command": "true"})]), text("traced"))
    code, _, err = exec_("--approve", "all", "trace the writes", trace=str(trace))
    assert code == 0, err
    writes = trace.read_text().splitlines()
    assert any("tool_dispatch" in w for w in writes) and len(writes) > 20
    for at, label in enumerate(writes, 1):
        for only in (False, True):
            _one_case(exec_, fake_openai, home, project, at, only, label)
