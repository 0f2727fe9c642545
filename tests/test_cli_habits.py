"""Command-line habits: ``-c`` / ``-r [S]`` short flags, a new chat at once in a project
without sessions."""

from __future__ import annotations

from pathlib import Path

from mttui.cli.parser import build_parser
from mttui.cli.tui import has_sessions
from mttui.session.service import SessionService
from tests.support.tui import msg, write_session


def test_short_flags() -> None:
    parser = build_parser()
    assert parser.parse_args(["-c"]).continue_ is True
    assert parser.parse_args(["-r", "4a5b"]).resume == "4a5b"
    assert parser.parse_args(["-r"]).resume == ""  # the browser


def test_a_project_without_sessions_has_none(service: SessionService, home: Path) -> None:
    assert not has_sessions(service)
    assert not (home / "history").exists()  # looking created nothing
    write_session(service, "One", [msg("user", "hello", 1)])
    assert has_sessions(service)
