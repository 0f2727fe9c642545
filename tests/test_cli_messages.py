"""Command-line rough edges: a too-short reference is a usage error, a file given as
the project says so, empty and paged session lists say what to do next."""

from __future__ import annotations

from pathlib import Path

from mttui.session.service import SessionService
from tests.support.resume import cli
from tests.support.tui import msg, write_session


def test_a_too_short_reference_is_a_usage_error(home: Path, project: Path) -> None:
    out = cli(home, project, "history", "4a")
    assert out.returncode == 2 and "too short" in out.stderr


def test_a_file_as_project_is_not_a_directory(home: Path, project: Path) -> None:
    afile = project / "notes.txt"
    afile.write_text("x")
    out = cli(home, project, "--project", str(afile), "sessions")
    assert out.returncode == 2 and "not a directory" in out.stderr


def test_empty_home_all_projects(home: Path, project: Path) -> None:
    out = cli(home, project, "sessions", "--all-projects")
    assert out.returncode == 0 and out.stdout.strip() == "no sessions yet"


def test_the_more_hint_keeps_the_limit(service: SessionService, home: Path,
                                       project: Path) -> None:
    for n in range(3):
        write_session(service, f"S{n}", [msg("user", "hi", 1)])
    out = cli(home, project, "sessions", "--limit", "2")
    assert "more: mttui sessions --limit 2 --cursor " in out.stdout
