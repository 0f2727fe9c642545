"""The CLI contract of cli.md, driven as a user would: real processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mttui.session.service import SessionService


def run(home: Path, project: Path, *args: str,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "cfg.toml")}
    env.pop("MTTUI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "mttui.cli", "--project", str(project), *args],
        capture_output=True, text=True, env=env, input=stdin, timeout=120,
    )


def make_session(home: Path, project: Path, n: int, title: str | None = None) -> str:
    svc = SessionService(home, project)
    w = svc.create_session(provider="offline", model="offline", title=title)
    for i in range(1, n + 1):
        role = "user" if i % 2 else "assistant"
        w.append("transcript_message", message={
            "id": f"msg-{w.session_id}-{i}", "role": role,
            "content": f"message number {i} about durable sessions", "status": "sent"})
    sid = w.session_id
    w.close()
    return sid


@pytest.fixture
def two_sessions(home: Path, project: Path) -> tuple[str, str]:
    return make_session(home, project, 120, title="first"), make_session(home, project, 3)


def test_sessions_json_shape(home: Path, project: Path, two_sessions: tuple[str, str]) -> None:
    r = run(home, project, "sessions", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"sessions", "next_cursor"}
    ids = [s["id"] for s in out["sessions"]]
    assert ids == [two_sessions[1], two_sessions[0]]  # newest first
    s = out["sessions"][1]
    for key in ("id", "title", "project", "created_at", "updated_at", "message_count",
                "provider", "model", "status"):
        assert key in s
    assert s["message_count"] == 120 and s["title"] == "first"
    assert s["status"] == {"awaiting_approval": False, "interrupted_tools": 0,
                           "queued": 0, "corrupt_lines": 0}
    # the second session's title comes from its first user message
    assert out["sessions"][0]["title"].startswith("message number 1")


def test_sessions_cursor_pages(home: Path, project: Path, two_sessions: tuple[str, str]) -> None:
    first = json.loads(run(home, project, "sessions", "--json", "--limit", "1").stdout)
    assert len(first["sessions"]) == 1 and first["next_cursor"]
    second = json.loads(run(home, project, "sessions", "--json", "--limit", "1",
                            "--cursor", first["next_cursor"]).stdout)
    assert [s["id"] for s in second["sessions"]] == [two_sessions[0]]
    assert second["next_cursor"] is None


def test_history_json_pages(home: Path, project: Path, two_sessions: tuple[str, str]) -> None:
    sid = two_sessions[0]
    out = json.loads(run(home, project, "history", sid[:6], "--json").stdout)
    assert out["session_id"] == sid
    seqs = [m["seq"] for m in out["messages"]]
    assert seqs == list(range(71, 121)) and out["has_more"] is True and out["next_before"] == 71
    older = json.loads(run(home, project, "history", sid, "--json", "--before", "71").stdout)
    assert [m["seq"] for m in older["messages"]] == list(range(21, 71))
    around = json.loads(run(home, project, "history", sid, "--json", "--around", "5",
                            "--limit", "10").stdout)
    assert 5 in [m["seq"] for m in around["messages"]]
    m = out["messages"][0]
    assert {"seq", "id", "role", "content", "status", "created_at"} <= set(m)


def test_search_json_and_hostile(home: Path, project: Path, two_sessions: tuple[str, str]) -> None:
    out = json.loads(run(home, project, "search", "NUMBER 7 about", "--json").stdout)
    assert out["query"] == "NUMBER 7 about"
    assert out["hits"], "case-insensitive search found nothing"
    hit = out["hits"][0]
    keys = {"session_id", "session_title", "message_id", "seq", "role", "snippet", "score"}
    assert keys <= set(hit)
    for q in ['"', "foo\"", "*", "AND", "NEAR(", "-x", "%", "   "]:
        r = run(home, project, "search", q, "--json")
        assert r.returncode == 0, (q, r.stderr)
        assert isinstance(json.loads(r.stdout)["hits"], list)


def test_exit_codes(home: Path, project: Path, two_sessions: tuple[str, str]) -> None:
    r = run(home, project, "history", "ffffffffffff", "--json")
    assert r.returncode == 5 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert run(home, project, "history").returncode == 2
    assert run(home, project, "sessions", "--limit", "0").returncode == 2
    r = run(home, project, "resume-check", "zzzz", "--json")
    assert r.returncode == 5


def test_last_and_rename_and_export(home: Path, project: Path,
                                    two_sessions: tuple[str, str]) -> None:
    r = run(home, project, "rename", "last", "A better title")
    assert r.returncode == 0, r.stderr
    out = json.loads(run(home, project, "sessions", "--json").stdout)
    assert out["sessions"][0]["title"] == "A better title"
    md = run(home, project, "export", two_sessions[1]).stdout
    assert "message number 3" in md
    lines = run(home, project, "export", two_sessions[1], "--format", "jsonl").stdout.splitlines()
    assert all(json.loads(line)["session_id"] == two_sessions[1] for line in lines)


def test_delete_and_reindex_and_doctor(home: Path, project: Path,
                                       two_sessions: tuple[str, str]) -> None:
    assert run(home, project, "delete", two_sessions[1]).returncode == 2  # no --yes, no tty
    assert run(home, project, "delete", two_sessions[1], "--yes").returncode == 0
    out = json.loads(run(home, project, "sessions", "--json").stdout)
    assert [s["id"] for s in out["sessions"]] == [two_sessions[0]]
    re = json.loads(run(home, project, "reindex", "--json").stdout)
    assert re["sessions"] == 1 and re["messages"] == 120 and re["corrupt_lines"] == 0
    assert isinstance(re["seconds"], float)
    doc = json.loads(run(home, project, "doctor", "--json").stdout)
    assert doc["sessions_checked"] == 1 and doc["problems"] == []


def test_resume_check_transcript_form(home: Path, project: Path,
                                      two_sessions: tuple[str, str]) -> None:
    r = run(home, project, "resume-check", two_sessions[0], "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    for key in ("session_id", "thread_id", "mode", "refusal", "warnings", "pending_approval",
                "interrupted_tool_calls", "messages_in_view", "compression_used"):
        assert key in plan
    # no checkpoint was ever written for this thread
    assert plan["mode"] == "transcript"
    assert plan["refusal"]["code"] == "checkpoint_not_found"
    assert "execution_not_restored" in [w["code"] for w in plan["warnings"]]
    assert plan["messages_in_view"] == 120
