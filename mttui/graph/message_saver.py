"""LangGraph's SQLite saver with each message stored once per thread.

The checkpoint row holds the keys of its messages (see
:mod:`mttui.session.checkpoint_messages`); the messages themselves are written, in
the same transaction, only the first time a checkpoint of the thread holds them.
A tool step thus writes its own new messages and a short key list, not every
earlier tool output again. ``get_tuple`` and ``list`` give LangGraph the ordinary
checkpoint back (messages put in place of the keys); a checkpoint written inline,
before the table existed, is read as it is.

Imported only with LangGraph (by :func:`~mttui.graph.checkpoints.open_saver`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from mttui.session import checkpoint_messages as stored
from mttui.session.checkpoint_messages import REFS, MessageRow

MESSAGES = "messages"
Known = dict[int, tuple[Any, bytes]]


class MessageSaver(SqliteSaver):
    """``SqliteSaver`` whose checkpoints refer to their messages instead of holding them."""

    def __init__(self, conn: Any, **kw: Any) -> None:
        super().__init__(conn, **kw)
        # re-entrant: a checkpoint and its messages are read under one hold of the lock
        self.lock = threading.RLock()  # type: ignore[assignment]
        # (thread, namespace) → {id(message): (message, key)}: the messages of the newest
        # checkpoint this saver wrote or read, whose rows are stored (pruning keeps the
        # newest checkpoint's rows). Dropped when another connection commits.
        self.known: dict[tuple[str, str], Known] = {}
        self.data_version: int | None = None

    def setup(self) -> None:
        if self.is_setup:
            return
        super().setup()
        cur = self.conn.cursor()
        try:
            stored.create(cur)
            self.conn.commit()
        finally:
            cur.close()

    # -- writing ---------------------------------------------------------------
    def split(self, checkpoint: Checkpoint,
              known: Known | None = None) -> tuple[Checkpoint, list[MessageRow], Known]:
        """The checkpoint with its messages replaced by their keys, the messages not in
        ``known`` serialized (key, type, value), and what is known after writing them."""
        values = checkpoint["channel_values"]
        messages = values.get(MESSAGES)
        if not isinstance(messages, list):
            return checkpoint, [], {}
        known = known or {}
        rows: list[MessageRow] = []
        keys: list[bytes] = []
        now: Known = {}
        for message in messages:
            hit = known.get(id(message))
            if hit is not None and hit[0] is message:
                key = hit[1]
            else:
                type_, value = self.serde.dumps_typed(message)
                key = stored.key_of(type_, value)
                rows.append((key, type_, value))
            keys.append(key)
            if getattr(message, "id", None) is not None:  # (the reducer sets a missing id)
                now[id(message)] = (message, key)
        slim = {k: v for k, v in values.items() if k != MESSAGES}
        slim[REFS] = keys
        return {**checkpoint, "channel_values": slim}, rows, now

    def known_of(self, thread_id: str, ns: str) -> Known:
        """What is known of the thread's stored messages (nothing once another
        connection has committed: it may have pruned them). Call under the lock."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self.data_version:
            self.known.clear()
            self.data_version = version
        return self.known.pop((thread_id, ns), {})

    def put(self, config: RunnableConfig, checkpoint: Checkpoint,
            metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        """``SqliteSaver.put`` of the checkpoint with its message keys, its new messages
        inserted first in the same transaction (the saver's put commits both)."""
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"]["checkpoint_ns"]
        with self.lock:
            slim, rows, known = self.split(checkpoint, self.known_of(thread_id, ns))
            try:
                cur = self.conn.cursor()
                try:
                    stored.insert(cur, thread_id, rows)
                finally:
                    cur.close()
                out = super().put(config, slim, metadata, new_versions)
            except BaseException:
                self.conn.rollback()  # (no row without the checkpoint that refers to it)
                raise
            self.known[(thread_id, ns)] = known
        return out

    def set_messages(self, config: RunnableConfig, messages: Sequence[Any]) -> None:
        """Set the messages of the checkpoint ``config`` names, in place (same id,
        parent, metadata and channel versions): the fork seed's direct write."""
        found = self.get_tuple(config)
        if found is None:
            raise LookupError("no such checkpoint")
        values = {**found.checkpoint["channel_values"], MESSAGES: list(messages)}
        checkpoint: Any = {**found.checkpoint, "channel_values": values}
        slim, rows, _known = self.split(checkpoint)
        type_, blob = self.serde.dumps_typed(slim)
        conf = found.config["configurable"]
        thread_id = str(conf["thread_id"])
        with self.cursor() as cur:
            stored.insert(cur, thread_id, rows)
            cur.execute("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id = ? "
                        "AND checkpoint_ns = ? AND checkpoint_id = ?",
                        (type_, blob, thread_id, conf.get("checkpoint_ns", ""),
                         conf["checkpoint_id"]))  # fmt: skip

    def delete_thread(self, thread_id: str) -> None:
        with self.lock:
            self.known.clear()
            super().delete_thread(thread_id)
            with self.cursor() as cur:
                cur.execute(f"DELETE FROM {stored.TABLE} WHERE thread_id = ?", (str(thread_id),))

    # -- reading ---------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with self.lock:  # (the messages are read before anyone can prune them)
            found = super().get_tuple(config)
            if found is None:
                return None
            refs = found.checkpoint["channel_values"].get(REFS)
            full = self.resolved(found)
            if refs is not None and get_checkpoint_id(config) is None:
                # the newest checkpoint, whose messages the next put extends
                conf = full.config["configurable"]
                messages = full.checkpoint["channel_values"][MESSAGES]
                self.known_of(str(conf["thread_id"]), conf.get("checkpoint_ns", ""))
                self.known[(str(conf["thread_id"]), conf.get("checkpoint_ns", ""))] = {
                    id(m): (m, key) for m, key in zip(messages, refs, strict=True)
                    if getattr(m, "id", None) is not None}  # fmt: skip
            return full

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        for found in super().list(config, filter=filter, before=before, limit=limit):
            yield self.resolved(found)

    def resolved(self, found: CheckpointTuple) -> CheckpointTuple:
        """``found`` with the messages its keys name put in their place."""
        values = found.checkpoint["channel_values"]
        refs = values.get(REFS)
        if refs is None:
            return found  # the inline form
        thread_id = str(found.config["configurable"]["thread_id"])
        with self.cursor(transaction=False) as cur:
            rows = stored.load(cur, thread_id, refs)
        full = {k: v for k, v in values.items() if k != REFS}
        full[MESSAGES] = [self.serde.loads_typed(row) for row in rows]
        checkpoint: Any = {**found.checkpoint, "channel_values": full}
        return CheckpointTuple(found.config, checkpoint, found.metadata, found.parent_config,
                               found.pending_writes)
