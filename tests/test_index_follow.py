"""A big rebuild's helper tokenizes the older rows while the newer logs are still
read (``follow``): the index is the one built without it, the helper gets rows only
once committed and granted, it stops with its parent, and when it fails the rebuild
builds its shard itself."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mttui.session.index import follow, ingest, parallel_build, shards
from mttui.session.service import SessionService
from tests.support import logs
from tests.support.index_dump import logical_dump


def _sessions(service: SessionService, n: int, per: int) -> None:
    for s in range(n):
        items = [logs.message(f"m{i}", "user" if i % 2 else "assistant",
                              f"common uniq{s}x{i} " + ("排序算法 " if i % 3 == 0 else "")
                              + "y" * (i % 30 * 40))
                 for i in range(per)]  # fmt: skip
        logs.new_session(service, items)


def _hits(service: SessionService, query: str) -> list[tuple[str, int, float]]:
    return [(h.session_id, h.seq, h.score)
            for h in service.search(query, scope="all", limit=1000)]  # fmt: skip


@pytest.fixture
def following(monkeypatch: pytest.MonkeyPatch) -> list[follow.Follower]:
    """Every rebuild follows with a helper, committing after every log, granting
    small steps, and reading the next log only once the helper has tokenized what
    was committed (so the two really interleave); the followers started are listed."""
    monkeypatch.setattr(parallel_build, "HELPER_FROM_BYTES", 0)
    monkeypatch.setattr(ingest, "_COMMIT_BYTES", 1)
    monkeypatch.setattr(follow, "STEP", 7)
    committed = follow.Follower.committed

    def in_step(self: follow.Follower, rid: int) -> None:
        committed(self, rid)
        deadline = time.monotonic() + 30
        while self.position() < rid and self.child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)

    monkeypatch.setattr(follow.Follower, "committed", in_step)
    started: list[follow.Follower] = []
    start = parallel_build.start_follower

    def counted(index: Path) -> follow.Follower | None:
        found = start(index)
        if found is not None:
            started.append(found)
        return found

    monkeypatch.setattr(parallel_build, "start_follower", counted)
    return started


def test_a_followed_rebuild_is_the_rebuild_without_a_helper(
    home: Path, project: Path, following: list[follow.Follower],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = SessionService(home, project)
    _sessions(service, 12, 40)
    queries = ("common", "uniq7x3", "排序", "排序算法")
    before = {q: _hits(service, q) for q in queries}
    ingest.build_index(service.layout, home / "followed.sqlite")
    (helper,) = following
    assert helper.child.returncode == 0 and helper.rows and helper.done > 0
    built = sqlite3.connect(home / "followed.sqlite")
    upto = shards.split(built)
    older = built.execute("SELECT count(*) FROM messages WHERE rid <= ?", (upto,)).fetchone()[0]
    built.close()
    assert helper.rows == older  # its shard was used, not built again here
    monkeypatch.setattr(parallel_build, "HELPER_FROM_BYTES", 1 << 40)  # none at all
    ingest.build_index(service.layout, home / "alone.sqlite")
    assert len(following) == 1
    assert logical_dump(home / "followed.sqlite") == logical_dump(home / "alone.sqlite")
    service.reindex()
    assert {q: _hits(service, q) for q in queries} == before
    conn = sqlite3.connect(service.layout.index_path)
    older = conn.execute(f"SELECT count(*) FROM {shards.OLD}_docsize").fetchone()[0]
    conn.close()
    assert 0 < older < 480  # both shards hold rows
    assert not list(home.glob(".index-rebuild-*"))


def test_the_helper_stops_when_the_rebuild_is_gone(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    index, out = home / "index.sqlite", home / "index.sqlite.scratch"
    sqlite3.connect(index).close()
    child = parallel_build.spawn_helper(index, out, "follow")
    assert child is not None and child.stdout is not None and child.stdin is not None
    assert child.stdout.readline().strip() == "want"  # it asks, and waits
    child.stdin.close()  # the rebuild died: no answer will come
    assert child.wait(30) == 1
    assert not out.exists()
    child.stdout.close()


def test_a_helper_dying_half_way_costs_time_not_the_rebuild(
    home: Path, project: Path, following: list[follow.Follower],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = SessionService(home, project)
    _sessions(service, 6, 40)
    before = _hits(service, "common")
    committed = follow.Follower.committed  # (in step, from the fixture)

    def killed_after_100_rows(self: follow.Follower, rid: int) -> None:
        committed(self, rid)
        if rid > 100 and self.child.poll() is None:
            self.child.kill()
            self.child.wait()

    monkeypatch.setattr(follow.Follower, "committed", killed_after_100_rows)
    service.reindex()
    assert following and following[0].child.returncode != 0
    assert _hits(service, "common") == before
    conn = sqlite3.connect(service.layout.index_path)
    shards.register(conn)
    shards.integrity_check(conn)
    assert shards.row_count(conn) == 240
    conn.close()
    assert not list(home.glob(".index-rebuild-*"))


def test_progress_of_a_followed_rebuild_moves_forward(
    home: Path, project: Path, following: list[follow.Follower]
) -> None:
    service = SessionService(home, project)
    _sessions(service, 8, 40)
    seen: list[tuple[int, int]] = []
    service.reindex(lambda done, total: seen.append((done, total)))
    assert following
    total = seen[-1][1]
    assert seen[-1][0] == total and all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_an_interrupted_followed_rebuild_stops_its_helper(
    home: Path, project: Path, following: list[follow.Follower],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = SessionService(home, project)
    _sessions(service, 4, 20)
    before = _hits(service, "common")
    calls = [0]
    real = ingest.ingest_file

    def fails_on_third(*args: object, **kwargs: object) -> bool:
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest, "ingest_file", fails_on_third)
    with pytest.raises(KeyboardInterrupt):
        service.reindex()
    (helper,) = following
    assert helper.child.poll() is not None  # not left running
    monkeypatch.setattr(ingest, "ingest_file", real)
    assert _hits(SessionService(home, project), "common") == before  # the live index is intact
    service.reindex()
    assert not list(home.glob(".index-rebuild-*"))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_rebuild_takes_its_helper_along(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    for s in range(12):  # over 4 MB of logs: a helper follows the rebuild
        logs.new_session(service, [logs.message(f"m{i}", "user", f"common {s} {i} " + "z" * 9000)
                                   for i in range(40)])  # fmt: skip
    before = _hits(service, "common")
    service.close()
    script = ("import sys; from pathlib import Path; from mttui.session.service import "
              "SessionService; SessionService(Path(sys.argv[1]), Path(sys.argv[2])).reindex()")
    proc = subprocess.Popen([sys.executable, "-c", script, str(home), str(project)])
    deadline = time.monotonic() + 60
    helpers: list[int] = []
    while not helpers and proc.poll() is None and time.monotonic() < deadline:
        helpers = _children(proc.pid)
        time.sleep(0.001)
    proc.kill()
    proc.wait()
    assert helpers, "the rebuild ended before its helper was seen"
    while any(_alive(h) for h in helpers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(_alive(h) for h in helpers)  # it noticed and stopped
    again = SessionService(home, project)
    assert _hits(again, "common") == before  # the live index is intact
    again.reindex()
    assert not list(home.glob(".index-rebuild-*"))


def test_a_rebuild_of_mostly_one_log_does_not_follow(
    home: Path, project: Path, following: list[follow.Follower]
) -> None:
    service = SessionService(home, project)
    _sessions(service, 1, 60)  # one log: its rows are committed only once it is read
    before = _hits(service, "common")
    service.reindex()
    assert following == []
    assert _hits(service, "common") == before
    conn = sqlite3.connect(service.layout.index_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # the live index's own
    conn.close()


# A helper that speaks the protocol and takes ``delay`` seconds per rowid granted.
_PACED_HELPER = r"""
import sys, time
delay, done = float(sys.argv[1]), 0
print("want", flush=True)
while True:
    word, arg = sys.stdin.readline().split()
    hi = int(arg)
    if word == "go":
        print("want", flush=True)
    time.sleep(delay * (hi - done))
    print(f"n {hi - done}", flush=True)
    done = hi
    if word == "end":
        break
print(f"rows {done}", flush=True)
"""


def _meet(helper_delay: float, own_delay: float, last: int) -> tuple[int, list[tuple[int, int]]]:
    child = subprocess.Popen([sys.executable, "-c", _PACED_HELPER, str(helper_delay)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    follower = follow.Follower(child)
    try:
        follower.committed(last)  # as while the logs are read: the helper starts on them
        deadline = time.monotonic() + 30
        while follower.position() == 0 and time.monotonic() < deadline:
            time.sleep(0.001)  # (not timed: its interpreter's start is not its pace)
        follower.meet(last)
        claims = []
        while (got := follower.claim()) is not None:
            claims.append(got)
            time.sleep(own_delay * (got[1] - got[0]))
        split = follower.split()
        assert child.wait(30) == 0
        follower.join()
        assert follower.rows == split  # the helper was told to end exactly there
    finally:
        follower.close()
    return split, claims


@pytest.mark.parametrize("helper_faster", [True, False])
def test_the_rebuild_and_the_helper_meet_where_their_speeds_put_them(
    monkeypatch: pytest.MonkeyPatch, helper_faster: bool
) -> None:
    monkeypatch.setattr(follow, "STEP", 100)
    fast, slow = 10e-6, 60e-6  # seconds per row: one side does about 6 rows to 1
    split, claims = _meet(fast if helper_faster else slow, slow if helper_faster else fast,
                          last=12_050)  # fmt: skip
    # The rebuild's claims go down from the newest row without a gap, to the split.
    assert claims[0][1] == 12_050 and claims[-1][0] == split
    assert all(a[0] == b[1] for a, b in itertools.pairwise(claims))
    if helper_faster:
        assert split > 8_000
    else:
        assert split < 4_000


def test_a_helper_that_is_gone_leaves_every_row_to_the_rebuild(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(follow, "STEP", 100)
    child = subprocess.Popen([sys.executable, "-c", "print('want', flush=True)"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    follower = follow.Follower(child)
    try:
        follower.meet(5_000)
        claims = []
        while (got := follower.claim()) is not None:
            claims.append(got)
        assert child.wait(30) == 0
    finally:
        follower.close()
    assert sum(hi - lo for lo, hi in claims) == 5_000 - follower.split()
    assert max(hi - lo for lo, hi in claims) <= 4 * 100  # in bounded ranges still
