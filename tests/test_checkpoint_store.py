"""The one module that runs SQL against LangGraph's checkpoint tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mttui.session import checkpoint_store


def _db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
        "type TEXT, checkpoint BLOB, metadata BLOB);"
        "CREATE TABLE writes (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
        "task_id TEXT, channel TEXT, type TEXT, value BLOB, task_path TEXT, idx INTEGER);"
    )
    for thread, ns, cid in [("a", "", "1"), ("a", "", "2"), ("a", "", "3"), ("a", "sub", "1"),
                            ("b", "", "1")]:  # fmt: skip
        conn.execute("INSERT INTO checkpoints VALUES (?, ?, ?, 'msgpack', x'00', NULL)",
                     (thread, ns, cid))  # fmt: skip
        conn.execute("INSERT INTO writes VALUES (?, ?, ?, 't', 'c', 'null', NULL, '', 0)",
                     (thread, ns, cid))  # fmt: skip
    conn.commit()
    conn.close()
    return path


def test_reads_without_creating(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    assert not checkpoint_store.has_thread(missing, "a")
    assert checkpoint_store.thread_ids(missing) == set()
    assert checkpoint_store.newest_checkpoint(missing, "a") is None
    checkpoint_store.delete_threads(missing, ["a"])
    assert not missing.exists()
    db = _db(tmp_path / "c.sqlite")
    assert checkpoint_store.has_thread(db, "a") and not checkpoint_store.has_thread(db, "z")
    assert checkpoint_store.thread_ids(db) == {"a", "b"}
    found = checkpoint_store.newest_checkpoint(db, "a")
    assert found is not None and found[0][0] == "3" and [w[0] for w in found[1]] == ["t"]
    assert checkpoint_store.newest_checkpoint(db, "z") is None


def test_prune_keeps_the_newest_per_namespace(tmp_path: Path) -> None:
    db = _db(tmp_path / "c.sqlite")
    conn = sqlite3.connect(db)
    cur = conn.cursor()
    assert checkpoint_store.prune_thread(cur, "a") == 2
    conn.commit()
    assert checkpoint_store.count(cur, "a") == 2  # the newest of "" and of "sub"
    assert checkpoint_store.count(cur, "b") == 1
    assert conn.execute("SELECT count(*) FROM writes WHERE thread_id = 'a'").fetchone()[0] == 2
    conn.close()


def test_delete_threads(tmp_path: Path) -> None:
    db = _db(tmp_path / "c.sqlite")
    checkpoint_store.delete_threads(db, ["a"])
    assert checkpoint_store.thread_ids(db) == {"b"}
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT DISTINCT thread_id FROM writes").fetchall() == [("b",)]
    conn.close()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    checkpoint_store.delete_threads(garbage, ["a"])  # logged, not raised
