"""Checkpoint databases in the form written before messages were stored apart: each
checkpoint holds its whole message list inline and there is no ``checkpoint_messages``."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


class CountingSerde(JsonPlusSerializer):
    """LangGraph's serializer, counting what it serializes."""

    calls = 0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        self.calls += 1
        return super().dumps_typed(obj)


def make_inline(db: Path) -> int:
    """Rewrite every checkpoint of ``db`` the way ``SqliteSaver.put`` stores it (messages
    inline) and drop the message table; returns how many checkpoints were rewritten."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from mttui.graph.message_saver import MessageSaver

    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        ours, plain = MessageSaver(conn), SqliteSaver(conn)
        ours.is_setup = plain.is_setup = True
        found = list(ours.list(None))
        for t in found:
            conf = t.config["configurable"]
            parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            plain.put({"configurable": {**conf, "checkpoint_id": parent}}, t.checkpoint,
                      t.metadata, {})
        conn.execute("DROP TABLE checkpoint_messages")
        conn.commit()
        return len(found)
    finally:
        conn.close()


def message_rows(db: Path, thread_id: str) -> dict[bytes, int]:
    """``{key: stored length}`` of the thread's rows in ``checkpoint_messages``."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {k: n for k, n in conn.execute(
            "SELECT key, length(value) FROM checkpoint_messages WHERE thread_id = ?",
            (thread_id,))}  # fmt: skip
    finally:
        conn.close()


def newest_blob_size(db: Path, thread_id: str) -> int:
    """The stored size of the thread's newest checkpoint row."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute(
            "SELECT length(checkpoint) FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1", (thread_id,)).fetchone()[0])  # fmt: skip
    finally:
        conn.close()
