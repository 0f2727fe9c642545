"""cli.md as a black box: real ``mttui`` subprocesses on logs written by the app or by hand."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.support.resume import cli, json_events

OFFLINE = {"MTTUI_PROVIDER": "offline"}


def _json(r: Any) -> Any:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_queue_resume_with_ask_stops_at_a_pending_approval(home: Path, project: Path) -> None:
    """An approval that waits from an earlier run is asked again, not denied (exit 3)."""
    first = cli(home, project, "exec", "!touch marker.txt", "--json", **OFFLINE)
    assert first.returncode == 3, first.stderr
    sid = json_events(first.stdout)[0]["session_id"]
    assert cli(home, project, "queue", "add", sid, "after the approval").returncode == 0

    r = cli(home, project, "queue", "resume", sid, "--json", **OFFLINE)
    assert r.returncode == 3, r.stderr
    lines = json_events(r.stdout)
    names = [e["event"] for e in lines]
    assert "approval_request" in names and "approval_decision" not in names
    assert "tool_outcome" not in names and "run_start" not in names
    assert lines[-1] == {"event": "exit", "session_id": sid, "code": 3}
    assert not (project / "marker.txt").exists()
    plan = _json(cli(home, project, "resume-check", sid, "--json"))
    assert plan["pending_approval"] is not None
    items = _json(cli(home, project, "queue", "list", sid, "--json"))["items"]
    assert [(i["text"], i["state"]) for i in items] == [("after the approval", "held")]

    r = cli(home, project, "queue", "resume", sid, "--json", "--approve", "all", **OFFLINE)
    assert r.returncode == 0, r.stderr
    assert (project / "marker.txt").exists()
    assert [e["status"] for e in json_events(r.stdout) if e["event"] == "run_end"] == [
        "completed", "completed"]  # fmt: skip
    assert _json(cli(home, project, "queue", "list", sid, "--json"))["items"] == []


def _rec(kind: str, seq: int, sid: str, **extra: Any) -> str:
    stamp = f"2026-11-01T12:00:{seq:02d}.000Z"
    return json.dumps({"type": kind, "seq": seq, "timestamp": stamp, "session_id": sid, **extra},
                      ensure_ascii=False)  # fmt: skip


def _hand_log(home: Path, project: Path, sid: str, *, messages: int) -> Path:
    """A log written from storage.md alone: an unknown type, garbage and a torn last line."""
    proj = str(project.resolve())
    phash = hashlib.sha256(proj.encode()).hexdigest()[:16]
    folder = home / "history" / phash
    folder.mkdir(parents=True, exist_ok=True)
    lines = [_rec("session_start", 1, sid, v=1, thread_id=f"thread-{sid}", project=proj,
                  project_hash=phash, provider="offline", model="hand", title="Hand 手写",
                  app_version="0")]  # fmt: skip
    seq = 1
    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        seq += 1
        lines.append(_rec("transcript_message", seq, sid, message={
            "id": f"msg-{n}", "role": role, "content": f"line {n} zebra 斑马", "status": "sent"}))
        if n == 2:
            seq += 1
            lines.append(_rec("future_record_type", seq, sid, anything=1))
            lines.append("{not json")
    torn = _rec("transcript_message", seq + 1, sid, message={"id": "torn"})[:50]
    path = folder / f"session-20261101-120000-{sid}.jsonl"
    path.write_text("\n".join(lines) + "\n" + torn, encoding="utf-8")
    return path


def test_hand_written_log_is_listed_paged_searched_exported_and_deleted(
    home: Path, project: Path
) -> None:
    sid, other = "abcd00000001", "abcd00000002"
    path = _hand_log(home, project, sid, messages=7)
    _hand_log(home, project, other, messages=1)

    listed = _json(cli(home, project, "sessions", "--json"))
    row = next(s for s in listed["sessions"] if s["id"] == sid)
    assert row["message_count"] == 7 and row["title"] == "Hand 手写"
    assert row["status"]["corrupt_lines"] == 2 and row["status"]["awaiting_approval"] is False
    assert listed["next_cursor"] is None

    ambiguous = cli(home, project, "history", "abcd", "--json")
    assert ambiguous.returncode == 5 and len(ambiguous.stderr.strip().splitlines()) == 1
    page = _json(cli(home, project, "history", sid[:6] + "000001", "--limit", "3", "--json"))
    assert [m["seq"] for m in page["messages"]] == [5, 6, 7]
    assert page["has_more"] is True and page["next_before"] == 5
    older = _json(cli(home, project, "history", sid, "--limit", "3", "--before", "5", "--json"))
    assert [m["seq"] for m in older["messages"]] == [2, 3, 4]
    assert {"seq", "id", "role", "content", "status", "created_at"} <= set(older["messages"][0])

    hits = _json(cli(home, project, "search", "斑马", "--session", sid, "--json"))["hits"]
    assert len(hits) == 7 and {h["session_id"] for h in hits} == {sid}
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)

    plan = _json(cli(home, project, "resume-check", sid, "--json"))
    assert plan["mode"] == "transcript" and plan["refusal"]["code"] == "checkpoint_not_found"
    assert {"corrupt_lines_skipped", "execution_not_restored"} <= {
        w["code"] for w in plan["warnings"]}  # fmt: skip

    exported = cli(home, project, "export", sid, "--format", "jsonl")
    assert exported.returncode == 0
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert "line 6 zebra" in cli(home, project, "export", sid).stdout

    assert cli(home, project, "delete", sid, "--yes").returncode == 0
    assert not path.exists()
    assert cli(home, project, "history", sid, "--json").returncode == 5
    assert _json(cli(home, project, "search", "zebra", "--json"))["hits"][0]["session_id"] == other
