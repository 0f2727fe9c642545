"""The FTS index in two shards (schema v10): a rebuild splits the rows by rowid and
builds both shards at once; search, appends, edits and the integrity check see one
index; an index of schema 9 is migrated in place; the progress moves throughout."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from mttui.session.index import parallel_build, shards
from mttui.session.index.ingest import build_index
from mttui.session.index.schema import SCHEMA_VERSION
from mttui.session.service import SessionService
from tests.support import logs


def _sessions(service: SessionService, n: int, per: int) -> list[str]:
    """``n`` sessions of ``per`` messages; every message says "common", every
    seventh "rare", each its own "uniq<session>x<i>"; some text is CJK."""
    ids = []
    for s in range(n):
        items = [logs.message(f"m{i}", "user" if i % 2 else "assistant",
                              f"common words uniq{s}x{i} " + ("rare " if i % 7 == 0 else "")
                              + ("快速排序 " if i % 5 == 0 else "") + "x" * (i % 40 * 50))
                 for i in range(per)]  # fmt: skip
        ids.append(logs.new_session(service, items).session_id)
    return ids


def _counts(db: Path) -> tuple[int, int, int]:
    """(split, rows in the older shard, rows in the newer one), integrity checked."""
    conn = sqlite3.connect(db)
    shards.register(conn)  # the views give each text through shards.fts_text
    try:
        shards.integrity_check(conn)
        older = conn.execute(f"SELECT count(*) FROM {shards.ROWS[shards.OLD]}").fetchone()[0]
        newer = conn.execute(f"SELECT count(*) FROM {shards.ROWS[shards.NEW]}").fetchone()[0]
        return shards.split(conn), older, newer
    finally:
        conn.close()


def _hits(service: SessionService, query: str) -> list[tuple[str, int, float]]:
    return [(h.session_id, h.seq, h.score)
            for h in service.search(query, scope="all", limit=1000)]  # fmt: skip


def test_a_rebuild_splits_the_rows_and_search_sees_one_index(
    home: Path, project: Path
) -> None:
    service = SessionService(home, project)
    _sessions(service, 6, 150)  # 900 messages, 900 "common" (over the 500 ranked)
    caught_up = {q: _hits(service, q) for q in ("common", "rare", "uniq3x7", "快速排序", "排序")}
    assert _counts(service.layout.index_path)[0] == 0  # caught up: all in the newer shard
    assert len(caught_up["common"]) >= 500 and caught_up["uniq3x7"]
    service.reindex()
    upto, older, newer = _counts(service.layout.index_path)
    assert older > 200 and newer > 200 and older + newer == 900  # both shards hold rows
    again = SessionService(home, project)  # another process
    for query, hits in caught_up.items():
        assert _hits(again, query) == hits, query


def test_appends_and_edits_after_a_rebuild_go_to_their_shard(
    home: Path, project: Path
) -> None:
    service = SessionService(home, project)
    first, *_ = _sessions(service, 3, 60)
    service.reindex()
    upto, older, _ = _counts(service.layout.index_path)
    assert upto > 0 and older > 0
    with service.open_writer(first) as w:  # the first session's rows are all old
        w.append("message_update", message_id="m3", content="edited zephyrquill")
        w.append("transcript_message", message={"id": "new", "role": "user",
                                                "content": "appended zephyrquill"})
    hits = service.search("zephyrquill", scope="all")
    assert sorted(h.message_id for h in hits) == ["m3", "new"]
    assert not any(h.message_id == "m3" for h in service.search("uniq0x3", scope="all"))
    assert _counts(service.layout.index_path)[:2] == (upto, older)  # the split stays
    service.close()
    rebuilt = home / "rebuilt.sqlite"
    build_index(service.layout, rebuilt)
    assert sum(_counts(rebuilt)[1:]) == 181


def test_a_failing_helper_process_costs_time_not_the_rebuild(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    _sessions(service, 3, 40)
    before = _hits(service, "common")
    monkeypatch.setattr(parallel_build, "HELPER_FROM_BYTES", 0)  # a helper even for this
    monkeypatch.setenv("PYTHONHOME", str(home / "no-such-python"))  # the helper cannot start
    service.reindex()
    _, older, newer = _counts(service.layout.index_path)
    assert older + newer == 120  # (what the helper was granted before it died is older)
    assert _hits(service, "common") == before
    assert not list(home.glob("*.messages_fts*"))  # no scratch file left behind


def test_progress_moves_through_the_fts_build(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    _sessions(service, 2, 300)
    seen: list[tuple[int, int]] = []
    service.reindex(lambda done, total: seen.append((done, total)))
    total = seen[-1][1]
    assert seen[-1][0] == total and all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    logs_read = sum(p.stat().st_size for p in (home / "history").rglob("*.jsonl"))
    during_fts = [d for d, _ in seen if logs_read < d < total]
    assert len(during_fts) >= 10


def test_an_index_of_schema_9_is_migrated_in_place(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid, other = _sessions(service, 2, 30)
    expected = {q: _hits(service, q) for q in ("common", "rare", "uniq1x4")}
    service.close()
    old = sqlite3.connect(service.layout.index_path)  # what schema 9 held: one FTS table
    old.isolation_level = None
    for name in shards.SHARDS:
        old.execute(f"DROP TABLE {name}")
        old.execute(f"DROP VIEW {shards.ROWS[name]}")
    old.execute("DROP TABLE fts_split")
    old.execute("CREATE VIRTUAL TABLE messages_fts USING fts5 (text, content='messages', "
                "content_rowid='rid', tokenize='trigram', detail=none)")
    sess = old.execute("SELECT sess FROM sessions WHERE id = ?", (other,)).fetchone()[0]
    old.execute("INSERT INTO messages_fts (rowid, text) SELECT rid, text FROM messages "
                "WHERE sess <> ?", (sess,))
    old.execute("INSERT INTO fts_owed (sess, upto) VALUES (?, 30)", (sess,))  # a fast fork's
    old.execute("PRAGMA user_version = 9")
    old.close()
    again = SessionService(home, project)
    again.list_sessions()  # opens (migrates) the index: cheap, the FTS rows are owed
    owed = sqlite3.connect(service.layout.index_path)
    assert owed.execute("SELECT count(*) FROM fts_owed").fetchone()[0] == 2
    assert owed.execute(f"SELECT count(*) FROM {shards.OLD}_docsize").fetchone()[0] == 0
    owed.close()
    assert {q: _hits(again, q) for q in expected} == expected
    upto, older, newer = _counts(service.layout.index_path)
    assert (older, newer) == (60, 0)
    conn = sqlite3.connect(service.layout.index_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM fts_owed").fetchone()[0] == 0
    conn.close()
    with again.open_writer(sid) as w:
        w.append("transcript_message", message={"id": "late", "role": "user",
                                                "content": "late zephyrquill"})
    assert [h.message_id for h in again.search("zephyrquill", scope="all")] == ["late"]
    assert _counts(service.layout.index_path)[1:] == (60, 1)


def test_progress_moves_inside_one_huge_log(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    _sessions(service, 1, 3000)
    log_bytes = sum(p.stat().st_size for p in (home / "history").rglob("*.jsonl"))
    seen: list[int] = []
    service.reindex(lambda done, total: seen.append(done))
    inside = [d for d in seen if 0 < d < log_bytes]
    assert len(inside) >= 2 and seen == sorted(seen)


def test_a_big_enough_rebuild_uses_the_helper(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SessionService(home, project)
    _sessions(service, 1, 100)  # one log: the helper builds the newer half at the end
    monkeypatch.setattr(parallel_build, "HELPER_FROM_BYTES", 0)
    helpers: list[object] = []
    spawn = parallel_build.spawn_helper

    def counted(*args: Path | int) -> object:
        child = spawn(*args)  # type: ignore[arg-type]
        helpers.append(child)
        return child

    monkeypatch.setattr(parallel_build, "spawn_helper", counted)
    before = _hits(service, "common")
    service.reindex()
    assert len(helpers) == 1 and helpers[0] is not None
    assert helpers[0].returncode == 0  # type: ignore[attr-defined]
    assert _hits(service, "common") == before
    assert all(_counts(service.layout.index_path)[1:])


def test_a_rebuild_removes_what_a_killed_rebuild_left(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    _sessions(service, 1, 5)
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        stale = [home / f".index-rebuild-{gone.pid}.sqlite{s}" for s in ("", ".messages_fts_new")]
        busy = home / f".index-rebuild-{alive.pid}.sqlite"
        for path in [*stale, busy]:
            path.write_bytes(b"x")
        service.reindex()
        assert not any(p.exists() for p in stale)
        assert busy.exists()  # another rebuild still running
    finally:
        alive.kill()
        alive.wait()
