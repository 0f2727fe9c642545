"""One poisoned line stays one bad line: every other session and command works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mttui.core.resume_check import check as resume_check
from mttui.session.reader import parse_checked, read_all
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.logs import message, new_session
from tests.support.poison import append_raw, json_out, poisoned_lines, run_cli

NAMES = sorted(poisoned_lines("x", 1))


def _two_sessions(svc: SessionService) -> tuple[str, Path, str]:
    good = new_session(svc, [message("g1", "user", "a good question"),
                             message("g2", "assistant", "a good answer")], title="good")
    bad = new_session(svc, [message("b1", "user", "before the poison")], title="damaged")
    return good.session_id, bad.path, bad.session_id


@pytest.mark.parametrize("name", NAMES)
def test_a_poisoned_line_harms_nothing_else(svc: SessionService, name: str) -> None:
    good, bad_path, bad = _two_sessions(svc)
    line = poisoned_lines(bad, 3)[name]
    append_raw(bad_path, line)
    listed = {s.id for s in svc.list_sessions().sessions}
    assert listed == {good, bad}
    assert [m.content for m in svc.history(good).messages] == ["a good question", "a good answer"]
    assert "a good answer" in "".join(svc.export(good, "markdown"))
    assert len(list(svc.export(good, "jsonl"))) >= 3
    assert any(h.session_id == good for h in svc.search("good"))
    records, stats = read_all(bad_path)
    readable = stats.max_seq == 3
    assert stats.corrupt_lines + stats.bad_fields >= 1 or _harmless(name)
    for rec in records:  # whatever was read is valid UTF-8 and fits the index
        json.dumps(rec, ensure_ascii=False).encode("utf-8")
    t = fold(records)
    assert any(m.get("content") == "before the poison" for m in t.messages)
    assert svc.history(bad).messages[0].content == "before the poison"
    list(svc.export(bad, "jsonl"))
    list(svc.export(bad, "markdown"))
    resume_check(svc, bad)
    assert svc.reindex().sessions == 2
    report = svc.doctor(repair=True)
    assert any(r["code"] == "reindexed" for r in report.repaired)
    named = [p for p in report.problems if p["session_id"] == bad]
    assert named and any("line 3" in p["message"] for p in named) or _harmless(name)
    with svc.open_writer(bad) as w:  # and the damaged session takes new records
        rec = w.append("run_start", run_id="r-next")
    assert rec["seq"] == (4 if readable else 3)


def _harmless(name: str) -> bool:
    """Lines that are read as they are (surrogates replaced, nulls as absent)."""
    return name in ("lone surrogate text", "lone surrogate key", "null everywhere")


def test_surrogates_become_replacement_characters() -> None:
    rec, bad = parse_checked(
        b'{"type":"run_start","seq":1,"run_id":"a\\ud800b","\\udc00":"k","ok":"\\ud83d\\ude00"}'
    )
    assert rec is not None and bad == []
    assert rec["run_id"] == "a\ufffdb" and rec["ok"] == "\U0001f600"  # type: ignore[typeddict-item]
    assert "\ufffd" in rec  # the key too


def test_wrong_typed_fields_are_left_out_and_named() -> None:
    rec, bad = parse_checked(
        b'{"type":"approval_request","seq":4,"request_id":"apr","tool_calls":'
        b'[{"call_id":"c1","tool_name":"shell","arguments":{}},{"call_id":7},"x"]}'
    )
    assert rec is not None and bad == ["tool_calls"]
    assert rec["tool_calls"] == [{"call_id": "c1", "tool_name": "shell", "arguments": {}}]
    rec, bad = parse_checked(b'{"type":"tool_outcome","seq":5,"call_id":["a"],"status":"error"}')
    assert rec is not None and bad == ["call_id"] and "call_id" not in rec


def test_cli_read_commands_survive_every_poisoned_line(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    good, bad_path, bad = _two_sessions(svc)
    svc.close()
    lines = poisoned_lines(bad, 3)
    append_raw(bad_path, *(lines[n] for n in NAMES))
    listed = json_out(run_cli(home, project, "sessions", "--json"))
    assert {s["id"] for s in listed["sessions"]} == {good, bad}  # type: ignore[index]
    hist = json_out(run_cli(home, project, "history", good, "--json"))
    assert [m["content"] for m in hist["messages"]] == ["a good question", "a good answer"]  # type: ignore[index]
    for args in (("history", bad, "--json"), ("search", "good", "--json"),
                 ("resume-check", bad, "--json"), ("reindex", "--json")):
        json_out(run_cli(home, project, *args))
    for args in (("export", good), ("export", bad, "--format", "jsonl"), ("export", bad)):
        done = run_cli(home, project, *args)
        assert done.returncode == 0, (args, done.stderr)
    doctor = run_cli(home, project, "doctor", "--repair", "--json")
    assert doctor.returncode in (0, 1), doctor.stderr  # problems found is not a crash
    report = json.loads(doctor.stdout)
    assert any(p["session_id"] == bad and "line " in p["message"] for p in report["problems"])
