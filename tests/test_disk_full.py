"""A full disk at every write of an approved tool turn never runs a tool twice.

``support/disk_full.py`` makes the N-th durable write of ``mttui exec`` and all
after it fail with ENOSPC (log appends are cut short, SQLite reports a full disk),
for every N of one approved shell turn. Then space returns: the session is
resumed and continued. Every time: the tool ran at most once, every call has at
most one outcome, a decided approval is not asked again, the session goes on.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from mttui.session.records import parse_session_filename
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records as log_records
from tests.support.resume import env, json_events

ENTRY = Path(__file__).with_name("support") / "disk_full.py"
MARK = "echo ran >> runs.txt; echo done-once"


def _exec(home: Path, project: Path, url: str, *args: str, **extra: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, str(ENTRY), "exec", "--json", *args], cwd=project,
        env=env(home, OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test", **extra),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def _writes_of_a_turn(home: Path, project: Path, fake: FakeOpenAI, tmp: Path) -> list[str]:
    trace = tmp / "trace.txt"
    fake.add(tools([("call_t", "shell", {"command": MARK})]), text("traced"))
    code, _, err = _exec(home, project, fake.url, "--approve", "all", "trace the writes",
                         MTTUI_ENOSPC_TRACE=str(trace))  # fmt: skip
    assert code == 0, err
    return trace.read_text().splitlines()


def _log(home: Path, sid: str) -> list[dict[str, Any]]:
    [path] = home.glob(f"history/*/session-*-{sid}.jsonl")
    return [dict(r) for r in log_records(path)]


def test_disk_full_at_every_write_of_an_approved_tool_turn(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    writes = _writes_of_a_turn(home / "trace", project, fake_openai, tmp_path)
    assert any("tool_dispatch" in w for w in writes)
    for at in range(1, len(writes) + 1):
        case = tmp_path / f"at{at}"
        proj = case / "project"
        proj.mkdir(parents=True)
        h = case / "home"
        fake_openai.script.clear()
        fake_openai.add(tools([("call_a", "shell", {"command": MARK})]), text("first done"))
        code, out, err = _exec(h, proj, fake_openai.url, "--approve", "all", "run the marker",
                               MTTUI_ENOSPC_AT=str(at))  # fmt: skip
        where = f"disk full from write {at} ({writes[at - 1]}): exit {code} {err!r}"
        assert code in (0, 1), where  # a clear failure, no crash
        if code == 1:
            assert "disk is full" in err or "No space left" in err, where
            assert "Traceback" not in err, where
        sessions = list(h.glob("history/*/session-*.jsonl"))
        if not sessions:
            continue  # nothing was created: nothing to resume
        named = parse_session_filename(sessions[0].name)
        assert named is not None
        sid = named[1]
        decided = {r["request_id"] for r in _log(h, sid) if r["type"] == "approval_decision"}
        # space is back: resume what was pending, then one more turn
        fake_openai.script.clear()
        fake_openai.add(text("resumed"), text("resumed"))
        code, out, err = _exec(h, proj, fake_openai.url, "--resume", sid, "--approve", "all")
        assert code == 0, (where, "resume", err)
        asked = [e for e in json_events(out) if e["event"] == "approval_request"]
        assert not [e for e in asked if e["request_id"] in decided], (where, asked)
        fake_openai.script.clear()
        fake_openai.add(text("continued"))
        code, out, err = _exec(h, proj, fake_openai.url, "--session", sid, "--approve", "all",
                               "and again")  # fmt: skip
        assert code == 0, (where, "continue", err)
        ends = [e for e in json_events(out) if e["event"] == "run_end"]
        assert ends and ends[-1]["status"] == "completed", (where, out)
        records = _log(h, sid)
        runs = (proj / "runs.txt").read_text().count("ran") if (proj / "runs.txt").exists() else 0
        outcomes = Counter(r.get("call_id") for r in records if r["type"] == "tool_outcome")
        dispatched = Counter(r.get("call_id") for r in records if r["type"] == "tool_dispatch")
        assert runs <= 1, (where, records)
        assert all(n == 1 for n in outcomes.values()), (where, outcomes)
        assert all(n == 1 for n in dispatched.values()), (where, dispatched)
        if runs:
            assert dispatched["call_a"] == 1, where
