"""A last line whose ``seq`` no writer could have given it (far beyond the lines before
it) is not continued from: the next record takes the seq after the last sane one, and
nothing written later is lost to a reader (a real log, a real reopen, the real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.session.reader import last_seq, read_all
from mttui.session.service import SessionService
from tests.support.logs import message, new_session
from tests.support.poison import append_raw, run_cli


@pytest.mark.parametrize("bogus", [10**18, 2**63 - 1, 40])
@pytest.mark.parametrize("count", [3, 30])  # the start of the log in reach, or a run of seqs
def test_an_absurd_last_seq_is_not_continued_from(
    service: SessionService, bogus: int, count: int
) -> None:
    w = new_session(service, [message(f"m{i}", "user", f"text {i}") for i in range(count)])
    sane = count + 1  # session_start + the messages
    append_raw(w.path, b'{"type":"run_start","seq":%d,"run_id":"r"}' % bogus)
    assert last_seq(w.path) == sane
    with service.open_writer(w.session_id) as again:
        rec = again.append("run_start", run_id="next")
    assert rec["seq"] == sane + 1
    records, _ = read_all(w.path)
    assert "next" in [r.get("run_id") for r in records]


def test_a_plausible_seq_after_a_damaged_line_is_continued_from(
    service: SessionService,
) -> None:
    w = new_session(service, [message(f"m{i}", "user", f"text {i}") for i in range(3)])
    append_raw(w.path, b'{"type":"run_start","seq":5,"run_')  # damaged (its seq was 5)
    append_raw(w.path, b'{"type":"run_start","seq":6,"run_id":"r"}')
    with service.open_writer(w.session_id) as again:
        assert again.append("run_start", run_id="next")["seq"] == 7  # no seq used twice


def test_the_cli_continues_after_the_last_sane_seq(
    home: Path, project: Path, service: SessionService
) -> None:
    w = new_session(service, [message("m0", "user", "hello")])
    append_raw(w.path, b'{"type":"run_start","seq":1000000000000000000,"run_id":"r"}')
    r = run_cli(home, project, "rename", w.session_id, "renamed")
    assert r.returncode == 0, r.stderr
    seqs = [r["seq"] for r in read_all(w.path)[0]]
    assert seqs[-1] == 3


def test_lines_deleted_by_hand_do_not_make_seqs_reused(service: SessionService) -> None:
    """Fewer lines than seqs (some deleted by hand): the records left still say where
    the log is; the writer goes on after the last of them."""
    w = new_session(service, [message(f"m{i}", "user", f"text {i}") for i in range(12)])
    lines = w.path.read_bytes().splitlines(keepends=True)
    w.path.write_bytes(b"".join(lines[:3] + lines[8:]))  # seqs 4..8 gone
    with service.open_writer(w.session_id) as again:
        assert again.append("run_start", run_id="next")["seq"] == 14
