"""What runs unasked must be undoable (auto-edit with the sandbox): a shell command
that runs without approval finds read-only what a file snapshot cannot restore —
every ``.git``, git-ignored paths, nested repositories, files over 10 MB — and when
those are too many to bind, it asks. Real bwrap, real git, real ``mttui exec``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mttui.graph.tools.uncovered import MAX_GUARDED
from tests.support.identity import IDENTITIES, chown_tree, scratch, shell_as
from tests.support.resume import cli, json_events

REPRO = "rm -rf .git .env lib data.bin build notes.txt"
BIG = 11 * 1024 * 1024


def _repro_project(project: Path) -> None:
    """The issue's project: ``.env`` and ``build/`` ignored, ``lib`` a nested repo,
    ``data.bin`` over the snapshot's size limit, ``notes.txt`` an ordinary file."""
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".env\nbuild/\n")
    (project / ".env").write_text("TOKEN=keep-me\n")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("object\n")
    subprocess.run(["git", "init", "-q", str(project / "lib")], check=True)
    (project / "lib" / "code.py").write_text("x = 1\n")
    with open(project / "data.bin", "wb") as fh:
        fh.truncate(BIG)
    (project / "notes.txt").write_text("covered by the snapshot\n")


KEPT = (".git/HEAD", ".env", "build/out.o", "lib/code.py", "lib/.git/HEAD", "data.bin")


@pytest.mark.parametrize("who", IDENTITIES)
def test_an_unasked_command_cannot_touch_what_a_rewind_cannot_restore(who: str) -> None:
    with scratch(who) as base:
        project = base / "p"
        _repro_project(project)
        chown_tree(project, who)
        res = shell_as(who, project, REPRO, guarded=True)
        assert res["status"] == "error", res
        for rel in KEPT:
            assert (project / rel).exists(), rel
        assert (project / "data.bin").stat().st_size == BIG
        assert not (project / "notes.txt").exists()  # what a snapshot covers stays writable
        # asked and approved, the same command may delete them (all but .git): the test
        # can fail, and an approved command keeps the project usable (builds, installs)
        (project / "notes.txt").write_text("again\n")
        asked = shell_as(who, project, REPRO)
        assert (project / ".git" / "HEAD").exists() and (project / "lib" / ".git").exists()
        for rel in (".env", "build", "data.bin", "lib/code.py", "notes.txt"):
            assert not (project / rel).exists(), (rel, asked)


def test_auto_edit_exec_repro_deletes_nothing_unrestorable(home: Path, project: Path) -> None:
    _repro_project(project)
    r = cli(home, project, "exec", "--json", "--approval", "auto-edit", "--sandbox",
            "workspace", "!" + REPRO)
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    assert "approval_request" not in [e["event"] for e in events]
    for rel in KEPT:
        assert (project / rel).exists(), rel
    assert not (project / "notes.txt").exists()


def test_too_many_unrestorable_paths_make_the_command_ask(home: Path, project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("*.log\n")
    for i in range(MAX_GUARDED + 1):  # each one its own read-only bind: too many
        (project / f"run{i}.log").write_text("log\n")
    r = cli(home, project, "exec", "--json", "--approval", "auto-edit", "--sandbox",
            "workspace", "!rm -f *.log")
    assert r.returncode == 3, r.stderr  # an approval is needed
    assert "approval_request" in [e["event"] for e in json_events(r.stdout)]
    assert (project / "run0.log").exists()


def test_mttui_data_inside_the_project_is_read_only_to_commands(home: Path,
                                                                project: Path) -> None:
    data = project / "mttui-data"  # mttui started in ~ with the default data home
    r = cli(home, project, "exec", "--json", "--approval", "yolo", "--sandbox", "workspace",
            "!touch mttui-data/forged; touch made.txt", MTTUI_HOME=str(data))
    assert r.returncode == 0, r.stderr
    assert any(data.rglob("*.jsonl"))  # the session was stored there
    assert not (data / "forged").exists()
    assert (project / "made.txt").exists()
