"""The ``pending`` table: pending inputs projected through :class:`~mttui.session.pending.Lane`.

Only active items (``ACTIVE_STATES``) are loaded to apply a record: items in a
final state change only by ``pending_remove``, which deletes the row by id. So
applying records in any number of catch-ups gives the same rows as a rebuild.
``position`` is 1..n for queue items that still wait (lane order), else NULL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from ..paths import Layout
from ..pending import ACTIVE_STATES, Item, Lane, read_lane
from .schema import open_index

_COLS = "item_id, mode, text, state, created_at, message_id, error"


def load_lane(conn: sqlite3.Connection, sess: int, *, everything: bool = False) -> Lane:
    """The session's pending items from the index (active ones unless ``everything``)."""
    where = "" if everything else f" AND state IN ({','.join('?' * len(ACTIVE_STATES))})"
    args = (sess,) if everything else (sess, *ACTIVE_STATES)
    lane = Lane()
    rows = conn.execute(
        f"SELECT {_COLS}, position FROM pending WHERE sess = ?{where} "
        "ORDER BY position IS NULL, position, rowid",
        args,
    ).fetchall()
    for item_id, mode, text, state, created, message_id, error, position in rows:
        item = Item(item_id, mode, text, state, created, message_id, error)
        lane.items[item_id] = item
        if position is not None and mode == "queue":
            lane.order.append(item_id)
        if mode == "steer" and state == "unread" and message_id:
            lane.by_message[message_id] = item_id
    return lane


class PendingProjection:
    """Applies ``pending_*`` records (and steer failures) of one session to its rows."""

    def __init__(self, conn: sqlite3.Connection, sess: int) -> None:
        self.conn = conn
        self.sess = sess
        self._lane: Lane | None = None

    @property
    def lane(self) -> Lane:
        if self._lane is None:
            self._lane = load_lane(self.conn, self.sess)
        return self._lane

    def apply(self, rec: Mapping[str, object], ts: str) -> None:
        lane = self.lane
        changed = lane.apply(rec, ts)
        if rec.get("type") == "pending_remove" and not changed:
            item_id = rec.get("item_id")
            if isinstance(item_id, str):  # a final item (not loaded): the row goes too
                changed = [item_id]
        if not changed:
            return
        for item_id in changed:
            item = lane.items.get(item_id)
            if item is None:
                self.conn.execute(
                    "DELETE FROM pending WHERE sess = ? AND item_id = ?", (self.sess, item_id)
                )
                continue
            self.conn.execute(
                f"INSERT INTO pending (sess, {_COLS}, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                "NULL) ON CONFLICT (sess, item_id) DO UPDATE SET mode = excluded.mode, "
                "text = excluded.text, state = excluded.state, message_id = excluded.message_id, "
                "error = excluded.error, position = NULL",
                (self.sess, item.id, item.mode, item.text, item.state, item.created_at,
                 item.message_id, item.error),
            )  # fmt: skip
            if item.state not in ACTIVE_STATES:
                lane.items.pop(item_id)  # final: never loaded again either
        self.conn.executemany(
            "UPDATE pending SET position = ? WHERE sess = ? AND item_id = ?",
            [(n, self.sess, item_id) for n, item_id in enumerate(lane.order, 1)],
        )


def move_to_end(conn: sqlite3.Connection, sess: int, message_id: str, count: int) -> str | None:
    """Give a steer's message the last transcript place (``count``) and status ``sent``.

    Messages after it move up by one. Returns its text (for the preview), or
    ``None`` when the index has no such message. The caller flushes buffered rows first.
    """
    found = conn.execute(
        "SELECT rid, msg_seq, text FROM messages WHERE sess = ? AND id = ? "
        "ORDER BY msg_seq DESC LIMIT 1",
        (sess, message_id),
    ).fetchone()
    if found is None:
        return None
    rid, seq, text = found
    if seq < count:  # through 0 and negative numbers: (sess, msg_seq) stays unique
        conn.execute("UPDATE messages SET msg_seq = 0 WHERE rid = ?", (rid,))
        conn.execute(
            "UPDATE messages SET msg_seq = 1 - msg_seq WHERE sess = ? AND msg_seq > ?", (sess, seq)
        )
        conn.execute(
            "UPDATE messages SET msg_seq = -msg_seq WHERE sess = ? AND msg_seq < 0", (sess,)
        )
    conn.execute(
        "UPDATE messages SET msg_seq = ?, status = 'sent' WHERE rid = ?", (count, rid)
    )
    return str(text)


def lane_of(layout: Layout, session_id: str, path: Path) -> Lane:
    """The session's active pending items, read from the index (cheap; the caller has
    refreshed the session's row, e.g. with ``SessionService.get``), else from its log."""
    conn = open_index(layout)
    if conn is not None:
        try:
            row = conn.execute("SELECT sess FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is not None:
                return load_lane(conn, row[0])
        except sqlite3.Error:
            pass  # e.g. an index of an older schema: the log says the same
        finally:
            conn.close()
    return read_lane(path)
