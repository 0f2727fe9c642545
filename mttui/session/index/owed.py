"""Full-text rows a fork still owes: copied messages are searchable once paid.

Tokenizing the text of 100 000 copied messages into the trigram index costs
seconds, more than the whole fork may take (timetravel.md: ≤ 2 s). A fast fork
(``fork_rows``) therefore writes its ``messages`` rows and CJK pairs at once and
records here that its rows up to ``upto`` have no FTS rows yet. The debt is paid,
in full, before anything reads or changes the FTS table for them: a search, the
doctor's integrity check, a text update of such a row, the removal of the session.
A rebuilt index owes nothing (it fills the FTS table at its end).
"""

from __future__ import annotations

import sqlite3

from . import shards

# Owed rows worth telling a searching user about: writing them takes seconds from here.
NOTE_FROM = 5_000

SCHEMA = "CREATE TABLE IF NOT EXISTS fts_owed (sess INTEGER PRIMARY KEY, upto INTEGER NOT NULL)"


def migrate(conn: sqlite3.Connection) -> None:
    """Schema v8: the table of what forks still owe."""
    conn.execute(SCHEMA)


def owe(conn: sqlite3.Connection, sess: int, upto: int) -> None:
    """The rows of ``sess`` with ``msg_seq <= upto`` have no FTS rows yet (caller's
    transaction)."""
    conn.execute("INSERT OR REPLACE INTO fts_owed (sess, upto) VALUES (?, ?)", (sess, upto))


def due(conn: sqlite3.Connection) -> int:
    """About how many messages have their FTS rows owed (at most: sums of ``upto``)."""
    return int(conn.execute("SELECT coalesce(sum(upto), 0) FROM fts_owed").fetchone()[0])


def pay(conn: sqlite3.Connection, sess: int | None = None) -> int:
    """Write the FTS rows owed (by ``sess``, or by every session); returns how many
    sessions paid. Runs in the caller's transaction, else in its own."""
    sql = "SELECT sess, upto FROM fts_owed" + ("" if sess is None else " WHERE sess = ?")
    owed = conn.execute(sql, () if sess is None else (sess,)).fetchall()
    if not owed:
        return 0
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        for s, upto in conn.execute(sql, () if sess is None else (sess,)).fetchall():
            shards.insert_where(conn, "sess = ? AND msg_seq <= ?", (s, upto))
            conn.execute("DELETE FROM fts_owed WHERE sess = ?", (s,))
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")
    return len(owed)
