"""``mttui rewind``: code, conversation, dry run, undo, refusals and a crash in the middle —
real subprocesses, real git, the scripted OpenAI-compatible server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mttui.session.service import SessionService
from tests.support.crash import FAULT_ENTRY
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.resume import check, cli, codes, env, snapshot
from tests.support.timetravel import digest_dir, digest_git, run_json, user_repo


def _exec(home: Path, project: Path, fake: FakeOpenAI, *args: str) -> None:
    r = cli(home, project, "exec", "--approve", "all", *args,
            OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test")
    assert r.returncode == 0, r.stderr


def _mess(home: Path, project: Path, fake: FakeOpenAI) -> tuple[str, dict[str, str]]:
    """Turn 1 (seq 1-2) talks; turn 2 (seq 3) changes files with every kind of tool."""
    fake.add(text("hello back"),
             tools([("w1", "write_file", {"path": "new/dir/made.txt", "content": "made\n"}),
                    ("e1", "edit_file", {"path": "keep.txt", "old": "keep", "new": "kept"}),
                    ("s1", "shell", {"command": "rm a.txt && mv staged.txt moved.txt && "
                                                "echo log >> old.log && echo z > z.txt"})]),
             text("done"))
    _exec(home, project, fake, "hello")
    before = digest_dir(project)
    _exec(home, project, fake, "--continue", "make a mess")
    sid = SessionService(home, project).resolve("last").id
    return sid, before


def test_code_rewind_restores_the_tree_and_undo_brings_it_back(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    user_repo(project)
    git_before = digest_git(project)
    sid, before = _mess(home, project, fake_openai)
    assert (project / "z.txt").exists() and (project / "keep.txt").read_text() == "kept\n"
    after = digest_dir(project)
    cps = run_json(home, project, "checkpoints", sid)
    assert cps["available"] and [c["seq"] for c in cps["checkpoints"]] == [3]
    home_before = snapshot(home)
    dry = run_json(home, project, "rewind", sid, "--to", "3", "--code", "--dry-run")
    assert _unchanged(home_before, snapshot(home)) and digest_dir(project) == after
    assert dry["dry_run"] and dry["files_restored"] == ["a.txt", "keep.txt", "staged.txt"]
    assert dry["files_deleted"] == ["moved.txt", "new/dir/made.txt", "z.txt"]
    done = run_json(home, project, "rewind", sid, "--to", "3", "--code", "--yes")
    assert (done["files_restored"], done["files_deleted"]) == (
        dry["files_restored"], dry["files_deleted"])
    assert done["undo_ref"] and done["prompt"] == "make a mess" and not done["conversation"]
    now = digest_dir(project)
    assert now.pop("old.log") != before.pop("old.log")  # ignored: left alone
    assert now == before and not (project / "new").exists()
    undo = run_json(home, project, "rewind", sid, "--undo", "--yes")
    assert undo["files_restored"] == ["keep.txt", "moved.txt", "new/dir/made.txt", "z.txt"]
    assert undo["files_deleted"] == ["a.txt", "staged.txt"]
    assert digest_dir(project) == after
    assert digest_git(project) == git_before
    kinds = [r["type"] for r in records(SessionService(home, project).resolve(sid).path)]
    assert kinds.count("rewind_start") == kinds.count("rewind_end") == 2
    assert "rewind" not in kinds  # code only: the conversation is untouched


def test_conversation_rewind_sends_only_the_earlier_messages(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("one back"), text("two back"), text("three back"))
    _exec(home, project, fake_openai, "first question")
    _exec(home, project, fake_openai, "--continue", "second question")
    _exec(home, project, fake_openai, "--continue", "third question")
    sid = SessionService(home, project).resolve("last").id
    done = run_json(home, project, "rewind", sid, "--to", "3", "--conversation", "--yes")
    assert done["prompt"] == "second question" and done["files_restored"] == []
    fake_openai.requests.clear()
    fake_openai.add(text("another way"))
    _exec(home, project, fake_openai, "--continue", "second, differently")
    sent = [(m["role"], m["content"]) for m in fake_openai.requests[0]["messages"]
            if m["role"] != "system"]
    assert sent == [("user", "first question"), ("assistant", "one back"),
                    ("user", "second, differently")]
    history = run_json(home, project, "history", sid)["messages"]
    assert [m.get("branch") for m in history] == [None, None, "rewound", "rewound",
                                                   "rewound", "rewound", None, None]
    hits = run_json(home, project, "search", "third question")["hits"]
    assert [h["seq"] for h in hits] == [5]
    assert check(home, project, sid)["warnings"] == []
    undo = run_json(home, project, "rewind", sid, "--undo", "--yes")
    assert undo["conversation"] and not undo["code"]
    fake_openai.requests.clear()
    fake_openai.add(text("back on the old branch"))
    _exec(home, project, fake_openai, "--continue", "fourth")
    sent = [m["content"] for m in fake_openai.requests[0]["messages"] if m["role"] != "system"]
    assert sent == ["first question", "one back", "second question", "two back",
                    "third question", "three back", "fourth"]
    history = run_json(home, project, "history", sid)["messages"]
    assert [m["seq"] for m in history if m.get("branch")] == [7, 8]


def test_refusals_change_nothing(home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.add(text("hi"))
    _exec(home, project, fake_openai, "only talk")
    service = SessionService(home, project)
    sid = service.resolve("last").id
    before = snapshot(home)
    bad = cli(home, project, "rewind", sid, "--to", "2", "--yes")
    assert bad.returncode == 2 and "not a user message" in bad.stderr
    nosnap = cli(home, project, "rewind", sid, "--to", "1", "--yes")
    assert nosnap.returncode == 1 and "conversation-only" in nosnap.stderr
    ask = subprocess.run([sys.executable, "-m", "mttui.cli", "rewind", sid, "--to", "1"],
                         cwd=project, env=env(home), capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert ask.returncode == 2 and "--yes" in ask.stderr
    writer = service.open_session(service.resolve(sid).path)
    try:
        held = cli(home, project, "rewind", sid, "--to", "1", "--conversation", "--yes")
        assert held.returncode == 4, held.stderr
    finally:
        writer.close()
    assert _unchanged(before, snapshot(home))


def test_a_kill_mid_rewind_is_reported_and_repeating_it_finishes(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "a.txt").write_text("a\n")
    sid, before = _mess_small(home, project, fake_openai)
    proc = subprocess.run([sys.executable, str(FAULT_ENTRY), "rewind", sid, "--to", "1",
                           "--code", "--yes"], cwd=project, capture_output=True, text=True,
                          env=env(home, MTTUI_FAULT="after:rewind_start"), timeout=60)
    assert proc.returncode == -9
    plan: dict[str, Any] = check(home, project, sid)
    assert "rewind_incomplete" in codes(plan)
    warning = next(w for w in plan["warnings"] if w["code"] == "rewind_incomplete")
    start = [r for r in records(SessionService(home, project).resolve(sid).path)
             if r["type"] == "rewind_start"][0]
    assert start["ref_from"] in warning["message"] and start["ref_to"] in warning["message"]
    again = run_json(home, project, "rewind", sid, "--to", "1", "--code", "--yes")
    assert again["files_deleted"] == ["b.txt"]
    assert digest_dir(project) == before
    assert "rewind_incomplete" not in codes(check(home, project, sid))


def _mess_small(home: Path, project: Path, fake: FakeOpenAI) -> tuple[str, dict[str, str]]:
    fake.add(tools([("w1", "write_file", {"path": "b.txt", "content": "b\n"})]), text("ok"))
    before = digest_dir(project)
    _exec(home, project, fake, "write b")
    return SessionService(home, project).resolve("last").id, before


def _unchanged(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """The same logs, checkpoints and snapshots, and the same index rows (the index file
    itself may take in its write-ahead log when a reader closes it)."""
    def files(snap: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in snap["files"].items()
                if not k.startswith("index.sqlite") and not k.endswith(".lock")}

    return files(before) == files(after) and before["index"] == after["index"]
