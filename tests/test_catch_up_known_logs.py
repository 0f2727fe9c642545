"""The catch-up reads what the index knows of a project's logs through the project's
index (a small project) or straight through the table (a project with most of the
sessions): the same rows either way, and the catch-up still sees every change."""

from __future__ import annotations

from pathlib import Path

from mttui.session.index import known_logs as kl
from mttui.session.service import SessionService
from tests.support.tui import msg, write_session


def _plain(service: SessionService, phash: str) -> dict[str, tuple[object, ...]]:
    conn = service._db()  # noqa: SLF001 - the test compares with the plain query
    rows = conn.execute(f"SELECT {kl.COLUMNS} FROM sessions WHERE project_hash = ?", (phash,))
    return {r[1]: tuple(r) for r in rows}


def test_both_ways_read_the_same_rows_and_catch_up(home: Path, tmp_path: Path) -> None:
    big_dir, small_dir = tmp_path / "big", tmp_path / "small"
    big_dir.mkdir()
    small_dir.mkdir()
    big, small = SessionService(home, big_dir), SessionService(home, small_dir)
    ids = [write_session(big, f"big {n}", [msg("user", "hi", 1)]) for n in range(6)]
    write_session(small, "small", [msg("user", "hi", 1)])
    big.catch_up()
    small.catch_up()
    conn = big._db()  # noqa: SLF001
    assert kl._most_rows(conn, big.project_hash)  # noqa: SLF001 - 6 of 7: read through
    assert not kl._most_rows(conn, small.project_hash)  # noqa: SLF001
    for service in (big, small):
        assert kl.known_logs(conn, service.project_hash) == _plain(service, service.project_hash)
    everything = kl.known_logs(conn, None)
    assert len(everything) == 7

    # a new log and one that vanished are both seen by the next catch-up
    other = SessionService(home, big_dir)
    write_session(other, "one more", [msg("user", "again", 1)])
    other.close()
    big.get(ids[1]).path.unlink()
    assert big.catch_up() is True
    listed = {s.id for s in big.list_sessions(limit=50).sessions}
    assert ids[1] not in listed and ids[0] in listed and len(listed) == 6
