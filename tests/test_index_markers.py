"""Markers and ``forked_from`` come from the index: opening a chat reads no log, and an
index of the previous schema is migrated (its sessions re-read, ``updated_at`` mended)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from mttui.session.index import shards
from mttui.session.index.schema import SCHEMA_VERSION
from mttui.session.markers import scan_markers
from mttui.session.service import SessionService
from tests.support import logs


def _bytes_read() -> int:
    """Bytes this process has read through system calls (page cache included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _long_session(service: SessionService, n: int, text: str = "x" * 2000) -> str:
    items: list[logs.Record] = []
    for i in range(n):
        items.append(logs.message(f"m{i}", "user" if i % 2 else "assistant", text))
        if i == 10:
            items.append(("compression", {"summary": "early", "removed_count": 5}))
        if i == n - 3:
            items.append(("session_resumed", {"mode": "execution", "warnings": ["x"]}))
    items.append(("session_clear", {"thread_id": "t2"}))
    items.append(("rewind", {"to_seq": 3, "thread_id": "t3"}))
    return logs.new_session(service, items).session_id


def test_markers_do_not_read_the_log(service: SessionService) -> None:
    sid = _long_session(service, 2000)  # a 4 MB log
    path = service.get(sid).path
    assert path.stat().st_size > 4_000_000
    service.history(sid)  # the session row is fresh
    before = _bytes_read()
    found = service.markers(sid)
    read = _bytes_read() - before
    assert read < 200_000, f"opening the markers read {read} bytes"
    assert [(m.kind, m.anchor) for m in found] == [
        ("compression", 11), ("resumed", 1998), ("cleared", 2000), ("rewind", 2000)]
    assert found == scan_markers(path)  # the same as the log says


def test_markers_follow_appends_and_a_rebuild(service: SessionService) -> None:
    sid = logs.new_session(service, [logs.message("a", "user", "one")]).session_id
    with service.open_writer(sid) as w:
        w.append("compression", summary="later", removed_count=1)
        w.append("transcript_message", message={"id": "b", "role": "user", "content": "two"})
    other = SessionService(service.layout.home, service.project)  # another process
    path = service.get(sid).path
    assert [(m.kind, m.anchor) for m in other.markers(sid)] == [("compression", 1)]
    service.reindex()
    assert service.markers(sid) == other.markers(sid) == scan_markers(path)


def test_forks_are_listed_from_the_index(service: SessionService) -> None:
    sid = logs.new_session(service, [logs.message("a", "user", "one")]).session_id
    with service.create_session(provider="p", model="m",
                                forked_from={"session_id": sid, "seq": 1}) as w:
        fork_id = w.session_id
    by_id = {s.id: s for s in service.list_sessions().sessions}
    assert by_id[fork_id].fork == {"session_id": sid, "seq": 1}
    assert by_id[sid].fork == {}  # known: not a fork (no first line read)
    assert by_id[fork_id].forked_from() == {"session_id": sid, "seq": 1}


def test_an_index_of_schema_6_is_migrated(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid = logs.new_session(service, [
        logs.message("a", "user", "one"),
        ("compression", {"summary": "s", "removed_count": 1}),
        logs.message("b", "user", "two"),
    ]).session_id
    with service.create_session(provider="p", model="m",
                                forked_from={"session_id": sid, "seq": 1}) as w:
        fork_id = w.session_id
    right = service.get(sid).updated_at
    service.close()
    old = sqlite3.connect(service.layout.index_path)  # what schema 6 held
    old.execute("DROP TABLE markers")
    old.execute("ALTER TABLE sessions DROP COLUMN forked_from")
    old.execute("UPDATE sessions SET updated_at = '2099-01-01T00:00:00.000Z'")  # a rename's
    old.execute("PRAGMA user_version = 6")
    old.commit()
    old.close()
    again = SessionService(home, project)
    page = again.list_sessions()
    by_id = {s.id: s for s in page.sessions}
    assert by_id[sid].updated_at == right
    assert by_id[fork_id].fork == {"session_id": sid, "seq": 1}
    assert [(m.kind, m.anchor) for m in again.markers(sid)] == [("compression", 1)]
    assert again.search("two") and again.get(sid).message_count == 2
    conn = sqlite3.connect(service.layout.index_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    data = conn.execute("SELECT data FROM markers").fetchone()[0]
    assert json.loads(data)["summary"] == "s"
    shards.register(conn)  # the views give each text through shards.fts_text
    conn.execute("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()
