"""``mttui queue``: --help lists the actions; edit/move/remove take the position that
``queue list`` shows as well as the id."""

from __future__ import annotations

from pathlib import Path

from mttui.session.service import SessionService
from tests.support.resume import cli
from tests.support.tui import msg, write_session


def test_queue_help_and_positions(service: SessionService, home: Path,
                                  project: Path) -> None:
    helped = cli(home, project, "queue", "--help")
    for name in ("list", "add", "edit", "move", "remove", "resume"):
        assert f"    {name} " in helped.stdout
    sid = write_session(service, "Q", [msg("user", "hi", 1), msg("assistant", "hello", 2)])
    for text in ("first", "second", "third"):
        assert cli(home, project, "queue", "add", sid, text).returncode == 0
    assert cli(home, project, "queue", "remove", sid, "2").returncode == 0
    assert cli(home, project, "queue", "move", sid, "2", "1").returncode == 0
    assert cli(home, project, "queue", "edit", sid, "2", "FIRST").returncode == 0
    listed = cli(home, project, "queue", "list", sid).stdout
    assert listed.index("third") < listed.index("FIRST")
    assert "second" not in listed
