"""What the index keeps of the tool ledger (timetravel.md), for the ``⚠`` badge.

A call is unsettled while it was dispatched without an outcome (``open_tools``) or
closed as ``interrupted`` by a resume, until a ``tool_resolution`` settles it
(done, failed, rerun). ``tool_ledger`` keeps, per call, whether a resume closed
it as interrupted and whether the user settled it; the badge counts the calls
that are open or interrupted and not settled, like ``core.ledger`` lists them. A
re-run that is denied at its approval, or whose process ended before its approval
was asked, leaves the old call unsettled again.
"""

from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_ledger (
    sess INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    interrupted INTEGER NOT NULL DEFAULT 0,
    settled INTEGER NOT NULL DEFAULT 0,
    rerun_call TEXT,
    PRIMARY KEY (sess, call_id)
)
"""


def migrate(conn: sqlite3.Connection) -> None:
    """Schema v9: the table (filled when v7 has every session read again)."""
    conn.execute(SCHEMA)


def interrupted(conn: sqlite3.Connection, sess: int, call_id: str) -> None:
    """A resume closed the call as ``interrupted``: it may have run."""
    conn.execute(
        "INSERT INTO tool_ledger (sess, call_id, interrupted) VALUES (?, ?, 1) "
        "ON CONFLICT (sess, call_id) DO UPDATE SET interrupted = 1",
        (sess, call_id),
    )


def settle(conn: sqlite3.Connection, sess: int, call_id: str, rerun_call: str | None) -> None:
    """A ``tool_resolution``: settled (by a re-run as ``rerun_call``, until it is denied)."""
    conn.execute(
        "INSERT INTO tool_ledger (sess, call_id, settled, rerun_call) VALUES (?, ?, 1, ?) "
        "ON CONFLICT (sess, call_id) DO UPDATE SET settled = 1, rerun_call = excluded.rerun_call",
        (sess, call_id, rerun_call),
    )


def denied(conn: sqlite3.Connection, sess: int, call_ids: list[str]) -> None:
    """Calls denied at an approval: a re-run denied leaves its old call unsettled."""
    conn.executemany(
        "UPDATE tool_ledger SET settled = 0 WHERE sess = ? AND rerun_call = ?",
        [(sess, c) for c in call_ids],
    )


_ASKED = ("SELECT json_extract(j.value, '$.call_id') FROM approvals a, "
          "json_each(a.tool_calls) j WHERE a.sess = ? AND json_valid(a.tool_calls)")


def unasked_reruns(conn: sqlite3.Connection, sess: int) -> set[str]:
    """Calls whose (last) re-run was never asked about: nothing ran, still unsettled."""
    rows = conn.execute(
        f"SELECT call_id FROM tool_ledger WHERE sess = ? AND settled = 1 AND rerun_call IS NOT "
        f"NULL AND rerun_call NOT IN ({_ASKED})", (sess, sess)).fetchall()
    return {str(r[0]) for r in rows}


def unsettled(conn: sqlite3.Connection, sess: int) -> int:
    """Calls open or closed as interrupted, and not settled by the user. A re-run whose
    new call was never asked about (the process ended first; a re-run always asks) did
    not settle anything."""
    row = conn.execute(
        "SELECT count(*) FROM (SELECT call_id FROM open_tools WHERE sess = ? UNION "
        "SELECT call_id FROM tool_ledger WHERE sess = ? AND interrupted = 1) "
        "WHERE call_id NOT IN (SELECT call_id FROM tool_ledger WHERE sess = ? AND settled = 1 "
        f"AND (rerun_call IS NULL OR rerun_call IN ({_ASKED})))",
        (sess, sess, sess, sess),
    ).fetchone()
    return int(row[0])


def remove(conn: sqlite3.Connection, sess: int) -> None:
    conn.execute("DELETE FROM tool_ledger WHERE sess = ?", (sess,))
