"""Time travel keyed by the right message whatever came before it (queued inputs,
steers, inputs typed during an approval): the snapshot of a turn names the user
message ``history`` shows, and a code rewind to it restores the tree of just before."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.core.handle import SessionHandle
from mttui.core.rewind import RewindRefused, rewind
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.handles import approve_waiting, offline
from tests.support.resume import cli
from tests.support.timetravel import run_json


def _user_seqs(service: SessionService, sid: str) -> dict[str, int]:
    records, _ = service.records(sid)
    return {str(m.get("content")): i + 1 for i, m in enumerate(fold(records).messages)
            if m.get("role") == "user"}


def test_queued_input_does_not_shift_the_snapshot_numbering_cli(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    """The CLI repro: exec, queue add, queue resume, then a write turn."""
    fake_openai.add(text("hi"), text("got the queued one"),
                    tools([("w1", "write_file", {"path": "a.txt", "content": "new\n"})]),
                    text("written"))
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    assert cli(home, project, "exec", "hello", **env).returncode == 0
    sid = SessionService(home, project).resolve("last").id
    assert cli(home, project, "queue", "add", sid, "queued via cli").returncode == 0
    assert cli(home, project, "queue", "resume", sid, **env).returncode == 0
    r = cli(home, project, "exec", "--session", sid, "--approve", "all", "write it", **env)
    assert r.returncode == 0, r.stderr
    history = run_json(home, project, "history", sid)
    seq = next(m["seq"] for m in history["messages"] if m.get("text") == "write it"
               or m.get("content") == "write it")
    cps = run_json(home, project, "checkpoints", sid)
    assert [c["seq"] for c in cps["checkpoints"]] == [seq]
    done = run_json(home, project, "rewind", sid, "--to", str(seq), "--code", "--yes")
    assert done["files_deleted"] == ["a.txt"] and not (project / "a.txt").exists()


def _tree(project: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(project.glob("*.txt"))}


def _settle(handle: SessionHandle) -> None:
    """Approve whatever waits and run what the lane holds, until nothing is left."""
    while True:
        if handle.waiting_approval() is not None:
            approve_waiting(handle)
            continue
        ran = False
        for run in handle.pending.drain():  # each run is consumed before the next is asked
            ran = True
            list(run)
        if not ran:
            return


def test_steer_and_queue_during_an_approval_keep_each_turn_on_its_message(
    home: Path, service: SessionService, project: Path
) -> None:
    """Typed during an approval: a steer and a queued input. Each turn's snapshot names its
    own message; rewinding code to each restores the tree of just before it."""
    (project / "f.txt").write_text("v0\n")
    handle = SessionHandle.create(service, offline(), "start")
    try:
        list(handle.run("start"))
        list(handle.run("/write f.txt v1"))  # waits for approval
        handle.pending.steer("/write h.txt v2")  # typed during the approval
        handle.pending.add("/write f.txt v3")
        _settle(handle)
        list(handle.run("/write g.txt v4"))
        _settle(handle)
        sid = handle.session_id
    finally:
        handle.close()
    assert _tree(project) == {"f.txt": "v3\n", "g.txt": "v4\n", "h.txt": "v2\n"}
    seqs = _user_seqs(service, sid)
    expected = {  # the tree just before each of these messages was sent
        "/write g.txt v4": {"f.txt": "v3\n", "h.txt": "v2\n"},
        "/write f.txt v3": {"f.txt": "v1\n", "h.txt": "v2\n"},
        "/write h.txt v2": {"f.txt": "v1\n"},
        "/write f.txt v1": {"f.txt": "v0\n"},
    }
    cps = run_json(home, project, "checkpoints", sid)["checkpoints"]
    assert sorted(c["seq"] for c in cps) == sorted(seqs[t] for t in expected)
    for prompt, tree in expected.items():  # newest first, as a user steps back
        rewind(service, offline(), sid, seqs[prompt], conversation=False, code=True)
        assert _tree(project) == tree, prompt


def test_a_failed_snapshot_is_recorded_and_a_code_rewind_to_its_turn_refused(
    home: Path, service: SessionService, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not served by the next turn's snapshot (that would keep the turn's own edits)."""
    from mttui.session.snapshots import GitError, ShadowRepo

    real = ShadowRepo.snapshot
    calls = {"n": 0}

    def second_fails(self: ShadowRepo, message: str) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            raise GitError("index.lock: File exists")
        return real(self, message)

    monkeypatch.setattr(ShadowRepo, "snapshot", second_fails)
    handle = SessionHandle.create(service, offline(), "start")
    try:
        for prompt in ("/write a.txt A", "just talk", "/write b.txt B", "/write c.txt C"):
            list(handle.run(prompt))
            _settle(handle)
        sid = handle.session_id
    finally:
        handle.close()
    seqs = _user_seqs(service, sid)
    cps = run_json(home, project, "checkpoints", sid)["checkpoints"]
    failed = [c for c in cps if c.get("error")]
    assert [c["seq"] for c in failed] == [seqs["/write b.txt B"]] and failed[0]["ref"] is None
    for prompt in ("/write b.txt B", "just talk"):
        with pytest.raises(RewindRefused, match="index.lock"):
            rewind(service, offline(), sid, seqs[prompt], conversation=False, code=True)
        assert _tree(project) == {"a.txt": "A\n", "b.txt": "B\n", "c.txt": "C\n"}
    rewind(service, offline(), sid, seqs["/write a.txt A"], conversation=False, code=True)
    assert _tree(project) == {}
