"""A fork's index rows copied from its source's rows, instead of re-reading its log.

The copied log lines (``session.fork_copy``) say exactly what the source's lines
said, so the source's ``messages`` rows up to the fork point are the rows a reindex
of the fork would build, but for the fork's own ``sess``, byte offsets and record
timestamp. Their CJK pairs are copied; their FTS rows are owed (``owed``: paid
before the next search);
the ``sessions`` row gets the values applying those records would give it
(``SessionApplier`` writes it). A property test compares the result with a rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from bisect import bisect_left
from pathlib import Path

from ..markers import marker_of
from ..paths import Layout
from ..reader import parse_line
from ..records import title_from_text
from . import marker_rows
from .apply import SessionApplier, preview_of
from .ingest import session_row, transaction
from .owed import owe
from .schema import SessionRow, connect


def complete_from_index(conn: sqlite3.Connection, sess: int, asked: int) -> int:
    """``asked`` moved back so that no tool batch is split (as ``core.fork.complete_point``
    does on folded messages), from the tool calls and results the index keeps."""
    calls: dict[int, list[str]] = {}
    answers: dict[int, str] = {}
    for seq, extra in conn.execute(
        "SELECT msg_seq, extra FROM messages WHERE sess = ? AND msg_seq <= ? "
        "AND extra LIKE '%\"tool_call%'", (sess, asked)):
        found = json.loads(extra)
        ids = [str(c.get("id")) for c in found.get("tool_calls") or [] if isinstance(c, dict)]
        if ids:
            calls[seq] = ids
        if found.get("tool_call_id"):
            answers[seq] = str(found["tool_call_id"])
    point = asked
    while point > 0:
        answered = {cid for s, cid in answers.items() if s <= point}
        split = [s for s, ids in calls.items()
                 if s <= point and any(i not in answered for i in ids)]
        if not split:
            return point
        point = min(split) - 1  # just before the assistant message with the open calls
    return point


def index_fork(layout: Layout, *, source_id: str, fork_id: str, fork_path: Path,
               offsets: list[int], compressions: list[int], timestamp: str,
               last_seq: int) -> bool:
    """Give the fork ``fork_id`` (its ``session_start`` indexed, its copies appended at
    ``offsets`` in its file) the source's first ``len(offsets)`` message rows. ``False``
    when the rows are not where they should be (the caller ingests the file instead)."""
    conn = connect(layout.index_path)
    try:
        with transaction(conn):
            src, row = session_row(conn, source_id), session_row(conn, fork_id)
            if src is None or row is None or row["message_count"] or row["last_seq"] != 1:
                return False
            n = len(offsets)
            have = conn.execute("SELECT count(*) FROM messages WHERE sess = ? AND msg_seq <= ?",
                                (src["sess"], n)).fetchone()[0]
            if have != n:
                return False
            _copy_messages(conn, src["sess"], row["sess"], offsets, timestamp)
            _fill_row(conn, row, n, compressions, timestamp, last_seq)
            _add_markers(conn, row["sess"], fork_path, offsets, compressions)
            st = fork_path.stat()
            row["byte_offset"] = row["file_size"] = st.st_size
            row["file_mtime_ns"] = st.st_mtime_ns
            SessionApplier(conn, row, bulk=False).finish()
        return True
    finally:
        conn.close()


def _copy_messages(conn: sqlite3.Connection, src: int, sess: int, offsets: list[int],
                   timestamp: str) -> None:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS fork_offsets "
                 "(msg_seq INTEGER PRIMARY KEY, off INTEGER NOT NULL)")
    conn.execute("DELETE FROM temp.fork_offsets")
    conn.executemany("INSERT INTO temp.fork_offsets VALUES (?, ?)", enumerate(offsets, 1))
    conn.execute(
        "INSERT INTO messages (sess, msg_seq, id, role, status, created_at, byte_offset, text, "
        "extra) SELECT ?, m.msg_seq, m.id, m.role, m.status, ?, o.off, m.text, m.extra "
        "FROM temp.fork_offsets o JOIN messages m ON m.sess = ? AND m.msg_seq = o.msg_seq "
        "ORDER BY o.msg_seq", (sess, timestamp, src))
    conn.execute("DROP TABLE temp.fork_offsets")
    owe(conn, sess, len(offsets))  # the FTS rows: paid before the next search
    # the CJK pairs of a copy are its source's: copied through a map of rids, not
    # recomputed (``cjk_grams`` has no index on rid: it is scanned once, the map probed)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS fork_rids "
                 "(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    conn.execute("DELETE FROM temp.fork_rids")
    conn.execute("INSERT INTO temp.fork_rids SELECT o.rid, n.rid FROM messages n "
                 "JOIN messages o ON o.sess = ? AND o.msg_seq = n.msg_seq WHERE n.sess = ?",
                 (src, sess))
    conn.execute("INSERT OR IGNORE INTO cjk_grams (gram, rid) SELECT g.gram, m.new "
                 "FROM cjk_grams g CROSS JOIN temp.fork_rids m ON m.old = g.rid")
    conn.execute("DROP TABLE temp.fork_rids")


def _add_markers(conn: sqlite3.Connection, sess: int, path: Path, offsets: list[int],
                 compressions: list[int]) -> None:
    """The markers of the copied compression records (the only copied lines that make
    one), each after the messages copied before it."""
    if not compressions:
        return
    with path.open("rb") as fh:
        for off in compressions:
            fh.seek(off)
            rec = parse_line(fh.readline().strip())
            marker = None if rec is None else marker_of(rec, bisect_left(offsets, off))
            if marker is not None:
                marker_rows.add(conn, sess, marker)


def _fill_row(conn: sqlite3.Connection, row: SessionRow, n: int, compressions: list[int],
              timestamp: str, last_seq: int) -> None:
    """The ``sessions`` values the copied records give (``SessionApplier`` semantics)."""
    sess = row["sess"]
    row["message_count"] = n
    row["last_seq"] = last_seq
    row["updated_at"] = timestamp
    tokens = conn.execute(
        "SELECT coalesce(sum(CASE WHEN json_type(extra, '$.usage.input_tokens') = 'integer' "
        "AND json_extract(extra, '$.usage.input_tokens') > 0 "
        "THEN json_extract(extra, '$.usage.input_tokens') ELSE 0 END), 0), "
        "coalesce(sum(CASE WHEN json_type(extra, '$.usage.output_tokens') = 'integer' "
        "AND json_extract(extra, '$.usage.output_tokens') > 0 "
        "THEN json_extract(extra, '$.usage.output_tokens') ELSE 0 END), 0) "
        "FROM messages WHERE sess = ? AND role = 'assistant' AND extra IS NOT NULL "
        "AND json_type(extra, '$.usage') = 'object'", (sess,)).fetchone()
    row["msg_input_tokens"] += int(tokens[0])
    row["msg_output_tokens"] += int(tokens[1])
    if not row["derived_title"]:
        for (text,) in conn.execute(
                "SELECT text FROM messages WHERE sess = ? AND role = 'user' ORDER BY msg_seq",
                (sess,)):
            title = title_from_text(text)
            if title:
                row["derived_title"] = title
                break
    last = conn.execute("SELECT text, extra FROM messages WHERE sess = ? AND msg_seq = ?",
                        (sess, n)).fetchone()
    row["last_message_preview"] = preview_of(last[0], json.loads(last[1]) if last[1] else None)
    if compressions:
        row["compression_count"] += len(compressions)
        row["compression_offset"] = compressions[-1]
