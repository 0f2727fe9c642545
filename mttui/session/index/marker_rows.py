"""The ``markers`` table: compressions, resumes with warnings, clears and rewinds.

Opening a chat used to byte-scan its whole log for them; the index keeps them
instead, projected like every other table (in file order, by the same applier
for a catch-up and a rebuild). ``anchor`` is the number of transcript messages
before the record: the marker goes after message ``anchor`` in the history.
"""

from __future__ import annotations

import json
import sqlite3

from ..markers import RECORD_KINDS, Marker, MarkerKind
from . import ledger_rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS markers (
    sess INTEGER NOT NULL,
    record_seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    anchor INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS markers_sess ON markers (sess, anchor, record_seq)
"""

_KINDS: dict[str, MarkerKind] = {k: k for k in RECORD_KINDS.values()}


def add(conn: sqlite3.Connection, sess: int, marker: Marker) -> None:
    conn.execute(
        "INSERT INTO markers (sess, record_seq, kind, anchor, data) VALUES (?, ?, ?, ?, ?)",
        (sess, marker.record_seq, marker.kind, marker.anchor,
         json.dumps(marker.data, ensure_ascii=False)),
    )  # fmt: skip


def load(conn: sqlite3.Connection, sess: int) -> list[Marker]:
    """The session's markers in file order."""
    rows = conn.execute(
        "SELECT kind, anchor, record_seq, data FROM markers WHERE sess = ? ORDER BY rowid",
        (sess,),
    ).fetchall()
    out: list[Marker] = []
    for kind, anchor, seq, data in rows:
        known = _KINDS.get(kind)
        if known is not None:
            out.append(Marker(known, int(anchor), int(seq), dict(json.loads(data))))
    stale = ledger_rows.unasked_reruns(conn, sess)
    for marker in reversed(out):  # the last re-run of such a call never started
        if marker.kind == "resolution" and marker.data.get("call_id") in stale:
            stale.discard(str(marker.data["call_id"]))
            marker.data["not_started"] = True
    return out
