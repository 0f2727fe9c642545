"""File checkpoints: the shadow git repository (real git) and the record before a
run's first side effect (real ``mttui exec`` against the scripted server)."""

from __future__ import annotations

import os
from pathlib import Path

from mttui.session.service import SessionService
from mttui.session.snapshots import MAX_FILE_BYTES, ShadowRepo
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.resume import cli
from tests.support.timetravel import digest_dir, digest_git, user_repo


def test_restore_brings_back_the_exact_tree_and_never_touches_dot_git(
    home: Path, project: Path, tmp_path: Path
) -> None:
    user_repo(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("outside\n")
    (project / "out").symlink_to(outside)
    git_before = digest_git(project)
    repo = ShadowRepo(home, project)
    first = repo.snapshot()
    tree = digest_dir(project)
    assert first.files == len([p for p in tree if not p.endswith(("/",))]) - 2  # ignored x2
    assert repo.snapshot().ref == first.ref  # unchanged: the same commit
    # create, modify, delete, rename, a new directory, an ignored file
    (project / "new").mkdir()
    (project / "new" / "deep.txt").write_text("deep\n")
    (project / "a.txt").write_text("changed\n")
    (project / "keep.txt").unlink()
    (project / "staged.txt").rename(project / "moved.txt")
    (project / "build").mkdir()
    (project / "build" / "out.bin").write_bytes(b"x")
    (project / "old.log").write_text("ignored, changed\n")
    later = repo.snapshot()
    assert later.ref != first.ref
    dry = repo.changes(first.ref)
    changes = repo.restore(later.ref, first.ref)
    assert (dry.restored, dry.deleted) == (changes.restored, changes.deleted)
    assert changes.restored == ["a.txt", "keep.txt", "staged.txt"]
    assert changes.deleted == ["moved.txt", "new/deep.txt"]
    now = digest_dir(project)
    assert now.pop("build/out.bin") and now.pop("old.log") != tree.pop("old.log")
    assert now == tree
    assert (outside / "o.txt").read_text() == "outside\n"
    assert sorted(os.listdir(outside)) == ["o.txt"]
    repo.restore(repo.snapshot().ref, later.ref)  # the undo: the later tree again
    assert (project / "new" / "deep.txt").read_text() == "deep\n"
    assert not (project / "keep.txt").exists()
    assert digest_git(project) == git_before


def test_big_files_are_skipped_and_left_alone(home: Path, project: Path) -> None:
    (project / "small.txt").write_text("s")
    repo = ShadowRepo(home, project)
    first = repo.snapshot()
    with open(project / "big.bin", "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    (project / "small.txt").write_text("s2")
    snap = repo.snapshot()
    assert snap.skipped == ["big.bin"] and snap.files == 1
    changes = repo.restore(snap.ref, first.ref)
    assert changes.restored == ["small.txt"] and changes.deleted == []
    assert (project / "big.bin").stat().st_size == MAX_FILE_BYTES + 1


def _exec(home: Path, project: Path, fake: FakeOpenAI, *args: str, **env: str) -> str:
    r = cli(home, project, "exec", "--approve", "all", *args,
            OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test", **env)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_checkpoint_is_written_before_the_first_side_effect_only(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "a.txt").write_text("one\n")
    fake_openai.add(
        tools([("c1", "read_file", {"path": "a.txt"})]), text("read"),
        tools([("c2", "write_file", {"path": "b.txt", "content": "b"}),
               ("c3", "shell", {"command": "echo two > a.txt"})]), text("done"),
    )
    _exec(home, project, fake_openai, "just read")
    _exec(home, project, fake_openai, "--continue", "now write")
    log = records(SessionService(home, project).resolve("last").path)
    kinds = [r["type"] for r in log]
    checkpoints = [r for r in log if r["type"] == "file_checkpoint"]
    assert len(checkpoints) == 1
    cp = checkpoints[0]
    assert kinds.index("file_checkpoint") < [
        i for i, r in enumerate(log) if r.get("call_id") == "c2"][0]
    assert cp["before_seq"] == 5 and cp["files"] == 1 and cp["skipped"] == []
    runs = [r["run_id"] for r in log if r["type"] == "run_start"]
    assert cp["run_id"] == runs[1]
    repo = ShadowRepo(home, project)
    assert repo.has(cp["ref"])
    assert repo.changes(cp["ref"]).deleted == ["b.txt"]


def test_without_git_the_user_is_told_once_and_the_run_goes_on(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(
        tools([("c1", "write_file", {"path": "b.txt", "content": "b"})]),
        tools([("c2", "write_file", {"path": "c.txt", "content": "c"})]), text("done"),
    )
    err = _exec(home, project, fake_openai, "write", PATH=str(project / "no-bin"))
    assert err.count("file checkpoints are off") == 1
    assert (project / "b.txt").exists() and (project / "c.txt").exists()
    log = records(SessionService(home, project).resolve("last").path)
    assert not [r for r in log if r["type"] == "file_checkpoint"]


def test_a_file_ignored_then_is_never_deleted_even_if_the_rules_moved(
    home: Path, project: Path
) -> None:
    (project / ".gitignore").write_text("*.log\n")
    (project / "x.log").write_text("mine\n")
    repo = ShadowRepo(home, project)
    first = repo.snapshot()
    (project / ".gitignore").rename(project / "gi.bak")  # x.log is no longer ignored
    (project / "x.log").write_text("mine, changed\n")
    dry = repo.changes(first.ref)
    later = repo.snapshot()
    changes = repo.restore(later.ref, first.ref)
    assert dry == changes and changes.deleted == ["gi.bak"]
    assert changes.restored == [".gitignore"]
    assert (project / "x.log").read_text() == "mine, changed\n"
