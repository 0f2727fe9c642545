"""A code rewind never loses data: mttui's own files, line endings under .gitattributes,
nested repositories, its own output file, another session's running tool, and undo after
an interrupted rewind. Real git, real subprocesses, the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mttui.core.handle import SessionHandle
from mttui.core.rewind import RewindRefused, rewind, undo_rewind
from mttui.session.service import SessionService
from mttui.session.snapshots import ShadowRepo
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.handles import approve_waiting, offline
from tests.support.resume import check, cli, codes, env
from tests.support.timetravel import digest_dir, git, run_json


def _exec(home: Path, project: Path, fake: FakeOpenAI, *args: str) -> None:
    r = cli(home, project, "exec", "--approve", "all", *args,
            OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test")
    assert r.returncode == 0, r.stderr


def _log_lines(home: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in home.rglob("*.jsonl"))


def test_the_data_home_inside_the_project_is_never_rolled_back(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """mttui started in ~ with the default data dir: the logs live inside the project."""
    project = tmp_path / "user-home"
    home = project / ".local" / "share" / "mttui"
    project.mkdir()
    (project / "notes.txt").write_text("mine\n")
    fake_openai.add(tools([("w1", "write_file", {"path": "a.txt", "content": "a\n"})]),
                    text("wrote a"),
                    tools([("w2", "write_file", {"path": "b.txt", "content": "b\n"})]),
                    text("wrote b"))
    _exec(home, project, fake_openai, "write a")
    sid = SessionService(home, project).resolve("last").id
    _exec(home, project, fake_openai, "--session", sid, "write b")
    cps = run_json(home, project, "checkpoints", sid)["checkpoints"]
    repo = ShadowRepo(home, project)
    for c in cps:  # no snapshot holds a file of the data home
        listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", c["ref"]], env=repo.env,
                                capture_output=True, text=True, check=True).stdout
        assert ".local/" not in listed and "a.txt" not in listed or c["seq"] > 1
    before = _log_lines(home)
    done = run_json(home, project, "rewind", sid, "--to", "1", "--code", "--yes")
    assert sorted(done["files_deleted"]) == ["a.txt", "b.txt"]
    assert not any(".local" in p for p in done["files_deleted"] + done["files_restored"])
    assert _log_lines(home) > before  # nothing of the log went back; rewind_* appended
    assert (project / "notes.txt").read_text() == "mine\n"
    assert codes(check(home, project, sid)) == []
    run_json(home, project, "rewind", sid, "--undo", "--yes")
    assert (project / "b.txt").read_text() == "b\n"
    assert codes(check(home, project, sid)) == []


def test_line_endings_come_back_byte_for_byte_under_gitattributes(
    home: Path, service: SessionService, project: Path
) -> None:
    git(project, "init", "-q")
    (project / ".gitattributes").write_text("* text=auto\n*.dat filter=nope\n")
    crlf = b"one\r\ntwo\r\n"
    (project / "win.txt").write_bytes(crlf)
    (project / "x.dat").write_bytes(b"raw\r\n")
    handle = SessionHandle.create(service, offline(), "edit")
    try:
        list(handle.run("/edit win.txt one => uno"))
        approve_waiting(handle)
        list(handle.run("!printf 'changed\\n' > x.dat"))
        approve_waiting(handle)
        sid = handle.session_id
    finally:
        handle.close()
    after = ((project / "win.txt").read_bytes(), (project / "x.dat").read_bytes())
    assert after[1] == b"changed\n"
    rewind(service, offline(), sid, 1, conversation=False, code=True)
    assert (project / "win.txt").read_bytes() == crlf
    assert (project / "x.dat").read_bytes() == b"raw\r\n"
    undo_rewind(service, offline(), sid)
    assert ((project / "win.txt").read_bytes(), (project / "x.dat").read_bytes()) == after


def test_a_nested_repository_is_listed_as_skipped(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    git(project, "init", "-q")
    (project / "lib").mkdir()
    git(project / "lib", "init", "-q")
    (project / "lib" / "x.py").write_text("x = 1\n")
    fake_openai.add(tools([("w1", "write_file", {"path": "a.txt", "content": "a\n"})]),
                    text("done"))
    _exec(home, project, fake_openai, "write")
    sid = SessionService(home, project).resolve("last").id
    cps = run_json(home, project, "checkpoints", sid)["checkpoints"]
    assert cps[0]["skipped"] == ["lib/"]
    from mttui.core.rewind_points import preview

    shown = preview(SessionService(home, project), sid, 1)  # what the picker names
    assert shown.skipped == ["lib/"] and shown.result is not None
    assert shown.result.files_deleted == ["a.txt"]


def test_the_rewinds_own_output_file_in_the_project_is_kept(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(tools([("w1", "write_file", {"path": "a.txt", "content": "a\n"})]),
                    text("done"))
    _exec(home, project, fake_openai, "write")
    sid = SessionService(home, project).resolve("last").id
    out = project / "out.json"
    with open(out, "wb") as fh:  # as the shell does for `mttui rewind … > out.json`
        r = subprocess.run([sys.executable, "-m", "mttui.cli", "rewind", sid, "--to", "1",
                            "--code", "--yes", "--json"], cwd=project, env=env(home),
                           stdout=fh, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["files_deleted"] == ["a.txt"]


def test_a_code_rewind_waits_for_no_tool_of_another_session(
    home: Path, service: SessionService, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(tools([("w1", "write_file", {"path": "a.txt", "content": "a\n"})]),
                    text("done"),
                    tools([("s1", "shell", {"command": "touch started; sleep 3; echo b > b.txt"})]),
                    text("slept"))
    _exec(home, project, fake_openai, "write")
    sid_a = service.resolve("last").id
    other = subprocess.Popen(
        [sys.executable, "-m", "mttui.cli", "exec", "--approve", "all", "--sandbox", "off",
         "sleep a while"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env(home, OPENAI_BASE_URL=fake_openai.url, OPENAI_API_KEY="sk-test"))
    try:
        deadline = time.monotonic() + 30
        while not (project / "started").exists():
            assert time.monotonic() < deadline and other.poll() is None, other.stderr
            time.sleep(0.05)
        with pytest.raises(RewindRefused, match="running a tool"):
            rewind(service, offline(), sid_a, 1, conversation=False, code=True)
        assert (project / "a.txt").exists()
    finally:
        assert other.wait(timeout=60) == 0
    rewind(service, offline(), sid_a, 1, conversation=False, code=True)
    assert not (project / "a.txt").exists()


class _Killed(BaseException):
    """Stands for a kill -9 in the middle of a restore (nothing after it runs)."""


def test_undo_after_a_repeated_interrupted_rewind_restores_the_users_files(
    home: Path, service: SessionService, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in "abc":
        (project / f"{name}.txt").write_text(f"{name}0\n")
    handle = SessionHandle.create(service, offline(), "go")
    try:
        list(handle.run("!for f in a b c; do echo ${f}1 > $f.txt; done"))
        approve_waiting(handle)
        sid = handle.session_id
    finally:
        handle.close()
    mine = digest_dir(project)
    real_checkout = ShadowRepo.restore

    def half(self: ShadowRepo, ref_from: str, ref_to: str, protect: frozenset = frozenset()
             ) -> object:
        (self.project / "a.txt").write_text("a0\n")  # one file went back, then the kill
        raise _Killed

    monkeypatch.setattr(ShadowRepo, "restore", half)
    for _ in range(2):  # interrupted, then interrupted again when repeated
        with pytest.raises(_Killed):
            rewind(service, offline(), sid, 1, conversation=False, code=True)
    monkeypatch.setattr(ShadowRepo, "restore", real_checkout)
    assert "rewind_incomplete" in codes(check(home, project, sid))
    rewind(service, offline(), sid, 1, conversation=False, code=True)  # repeated: finished
    assert [(project / f"{n}.txt").read_text() for n in "abc"] == ["a0\n", "b0\n", "c0\n"]
    undo_rewind(service, offline(), sid)
    assert digest_dir(project) == mine


def test_a_rewind_of_both_killed_before_its_conversation_part_is_warned(
    home: Path, service: SessionService, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = SessionHandle.create(service, offline(), "go")
    try:
        list(handle.run("/write a.txt A"))
        approve_waiting(handle)
        sid = handle.session_id
    finally:
        handle.close()

    def killed(*args: object, **kwargs: object) -> str:
        raise _Killed

    monkeypatch.setattr("mttui.graph.seed.seed_thread", killed)
    with pytest.raises(_Killed):
        rewind(service, offline(), sid, 1, conversation=True, code=True)
    assert not (project / "a.txt").exists()
    plan = check(home, project, sid)
    assert "rewind_incomplete" in codes(plan)
    assert "conversation was not" in json.dumps(plan)
    monkeypatch.undo()
    rewind(service, offline(), sid, 1, conversation=True, code=True)
    assert "rewind_incomplete" not in codes(check(home, project, sid))
    os.sync()


def test_a_conversation_rewind_past_a_pending_approval_leaves_a_clean_resume(
    home: Path, service: SessionService, project: Path
) -> None:
    handle = SessionHandle.create(service, offline(), "go")
    try:
        list(handle.run("hello"))
        list(handle.run("!echo hi > y.txt"))  # waits for approval; then the user rewinds
        assert handle.waiting_approval() is not None
        sid = handle.session_id
    finally:
        handle.close()
    rewind(service, offline(), sid, 3, conversation=True, code=False)
    plan = check(home, project, sid)
    assert (plan["mode"], codes(plan), plan["pending_approval"]) == ("execution", [], None)
    undo_rewind(service, offline(), sid)  # the exchange comes back complete
    plan = check(home, project, sid)
    assert (plan["mode"], codes(plan), plan["dangling_tool_calls"]) == ("execution", [], [])
    assert not (project / "y.txt").exists()
