"""``mttui doctor`` exits 1 when it finds problems; ``--repair`` prints readable lines,
what it fixed and what it could not (and what to do about it)."""

from __future__ import annotations

from pathlib import Path

from mttui.cli.doctor_text import doctor_exit, doctor_lines
from mttui.session.service import SessionService
from tests.support.resume import cli
from tests.support.tui import msg, write_session


def test_doctor_exit_codes_and_words(service: SessionService, home: Path,
                                     project: Path) -> None:
    assert cli(home, project, "doctor").returncode == 0
    sid = write_session(service, "Damaged", [msg("user", "hello", 1)])
    with open(service.resolve(sid).path, "ab") as fh:
        fh.write(b'{"type":"transcript_message","seq":9,"message":{"id":"broken\n')
    found = cli(home, project, "doctor")
    assert found.returncode == 1
    assert "problem" in found.stdout and "doctor --repair" in found.stdout
    repaired = cli(home, project, "doctor", "--repair")
    out = repaired.stdout
    assert "{" not in out  # readable lines, not a Python dict
    assert "fixed: index rebuilt" in out
    assert "not fixed" in out and "skipped" in out


def test_repairable_problems_leave_exit_0() -> None:
    fixed = [{"session_id": None, "code": "permissions", "message": "x is not mode 0600"}]
    assert doctor_exit(fixed, repair=False) == 1
    assert doctor_exit(fixed, repair=True) == 0
    lines = doctor_lines(1, fixed, [{"session_id": None, "code": "permissions",
                                     "message": "x fixed"}], repair=True)
    assert "  fixed: x fixed" in lines and not any("not fixed" in ln for ln in lines)
