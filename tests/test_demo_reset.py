"""``mttui demo --reset`` starts the demo over: what was changed is gone."""

from __future__ import annotations

from pathlib import Path

from mttui.cli.parser import build_parser
from mttui.cli.tui import reset_demo
from mttui.demo import build_demo
from mttui.session.service import SessionService


def test_reset_starts_the_demo_over(tmp_path: Path) -> None:
    home = tmp_path / "demo"
    project = home / "project"
    ids = build_demo(home, project)
    service = SessionService(home, project)
    service.delete(ids[0])
    (project / "README.md").write_text("changed")
    assert build_demo(home, project) != ids  # a second run keeps what was changed
    reset_demo(home)
    assert not home.exists()
    build_demo(home, project)
    fresh = SessionService(home, project)
    assert len(fresh.list_sessions().sessions) == 6
    assert "tiny calculator" in (project / "README.md").read_text()
    assert build_parser().parse_args(["demo", "--reset"]).reset is True


def test_reset_leaves_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    reset_demo(tmp_path)
    assert (tmp_path / "keep.txt").exists()
