"""The messages of a thread's checkpoints, stored once each (``checkpoint_messages``).

A checkpoint of the agent holds the whole message list. Stored inline, every
checkpoint (two per tool step) rewrote every earlier tool output, so the bytes
written per step grew with the run. Instead each message is stored once per thread
in ``checkpoint_messages``, keyed by a hash of its serialized form, and the
checkpoint's ``channel_values`` holds the list of keys under :data:`REFS` in place of
``messages``. A row is written in the same transaction as the first checkpoint that
refers to it (``INSERT OR IGNORE``), and deleted when pruning removes the last
checkpoint that refers to it.

Checkpoints written before this table existed keep their messages inline; readers
take both forms. Plain ``sqlite3`` and ``ormsgpack``: no LangGraph here.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable

TABLE = "checkpoint_messages"
REFS = "__mttui_message_refs__"  # the channel_values key of the key list
KEY_BYTES = 16

CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (thread_id TEXT NOT NULL, key BLOB NOT NULL, "
    "type TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (thread_id, key))"
)

# (key, serialization type, serialized message)
MessageRow = tuple[bytes, str, bytes]


def key_of(type_: str, value: bytes) -> bytes:
    """The content address of a serialized message."""
    if type_ != "msgpack":  # (every message is, but the type is part of what is stored)
        value = type_.encode() + b"\0" + value
    return hashlib.blake2b(value, digest_size=KEY_BYTES).digest()


def create(cur: sqlite3.Cursor) -> None:
    cur.execute(CREATE)


def has_table(cur: sqlite3.Cursor) -> bool:
    cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,))
    return cur.fetchone() is not None


def insert(cur: sqlite3.Cursor, thread_id: str, rows: Iterable[MessageRow]) -> None:
    """Store ``rows`` for ``thread_id``; a key already stored is left as it is."""
    cur.executemany(
        f"INSERT OR IGNORE INTO {TABLE} (thread_id, key, type, value) VALUES (?, ?, ?, ?)",
        ((thread_id, key, type_, value) for key, type_, value in rows),
    )


def load(cur: sqlite3.Cursor, thread_id: str, keys: list[bytes]) -> list[tuple[str, bytes]]:
    """The serialized messages of ``keys``, in their order. A key without its row is
    a broken database: :class:`LookupError`."""
    wanted = set(keys)
    found: dict[bytes, tuple[str, bytes]] = {}
    if len(wanted) <= 200:
        for key in wanted:
            cur.execute(f"SELECT type, value FROM {TABLE} WHERE thread_id = ? AND key = ?",
                        (thread_id, key))
            row = cur.fetchone()
            if row is not None:
                found[key] = (row[0], row[1])
    else:
        cur.execute(f"SELECT key, type, value FROM {TABLE} WHERE thread_id = ?", (thread_id,))
        for key, type_, value in cur:
            if key in wanted:
                found[key] = (type_, value)
    missing = wanted.difference(found)
    if missing:
        raise LookupError(f"{len(missing)} checkpointed message(s) of thread {thread_id} "
                          "are missing from the checkpoint database")
    return [found[k] for k in keys]


def refs_of(type_: str, blob: bytes) -> list[bytes] | None:
    """The message keys a serialized checkpoint refers to (``[]`` for the inline
    form), or ``None`` when the blob cannot be read."""
    import ormsgpack

    if type_ != "msgpack":
        return None
    try:
        ckpt = ormsgpack.unpackb(blob, ext_hook=lambda _code, _data: None,
                                 option=ormsgpack.OPT_NON_STR_KEYS)
    except (ormsgpack.MsgpackDecodeError, ValueError, TypeError):
        return None
    values = ckpt.get("channel_values") if isinstance(ckpt, dict) else None
    if not isinstance(values, dict):
        return None
    refs = values.get(REFS, [])
    if not (isinstance(refs, list) and all(isinstance(r, bytes) for r in refs)):
        return None
    return refs


def drop_unreferenced(cur: sqlite3.Cursor, thread_id: str, candidates: set[bytes]) -> int:
    """Delete the rows among ``candidates`` that no remaining checkpoint of
    ``thread_id`` refers to; returns how many went. The caller commits."""
    if not candidates:
        return 0
    cur.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?", (thread_id,))
    kept: set[bytes] = set()
    for type_, blob in cur.fetchall():
        refs = refs_of(type_, blob)
        if refs is None:
            return 0  # what it refers to is unknown: keep every row
        kept.update(refs)
    doomed = [(thread_id, k) for k in candidates - kept]
    cur.executemany(f"DELETE FROM {TABLE} WHERE thread_id = ? AND key = ?", doomed)
    return len(doomed)

