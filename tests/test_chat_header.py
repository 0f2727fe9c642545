"""The chat header names the project folder and its git branch."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mttui.core.project_info import git_branch
from mttui.session.service import SessionService
from tests.support.tui import SIZE, make_app, screen_text, settle


def test_git_branch_from_head(tmp_path: Path) -> None:
    assert git_branch(tmp_path) is None
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(tmp_path)], check=True)
    (tmp_path / "sub").mkdir()
    assert git_branch(tmp_path / "sub") == "feature/x"


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


async def test_the_header_shows_project_and_branch(home: Path, tmp_path: Path) -> None:
    project = _repo(tmp_path / "shop")
    app = make_app(SessionService(home, project), open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first_line = screen_text(app).splitlines()[0]
        assert "shop (main)" in first_line
