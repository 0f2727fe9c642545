"""The full-text index in two shards, so that a rebuild tokenizes on two cores.

Tokenizing text into trigrams is most of a rebuild (about 15 MB/s of source code
on one core) and one FTS5 table is built by one thread. The messages are
therefore split by rowid at ``fts_split.upto``: ``messages_fts`` holds the rows at
or below it, ``messages_fts_new`` the rows above it. A rebuild puts the split
where half of the text is behind it and builds the two halves at once
(``parallel_build``); rows appended later always land in the newer shard. Each
shard is external content over a view of its own rows (``messages_fts_old_rows``,
``messages_fts_new_rows``), so ``rebuild`` and the integrity check of each shard
see exactly its rows. Every FTS write goes through this module, which routes
rows by those views; the split only moves in an empty or freshly built index.

A shard is not given a message's text as stored but its distinct pieces of 3 or
more bytes, each once (``fts_text``): the text cut at ASCII whitespace and
punctuation but "_" and "." (``fts.pieces``). A query asks only for the trigrams
inside the pieces of its tokens, and each of those lies inside one piece of any text
that contains the token, so every trigram a query can ask for is kept. Source code
and logs repeat their pieces (``f(a, b)``, ``f(b)``): agent-shaped text gives FTS5
two thirds of the characters its distinct words have, and a rebuild tokenizes ~40 %
less. The views give the same (``register`` the function on every connection that
writes or checks a shard), so the integrity check still compares a shard with
exactly what it should hold.
"""

from __future__ import annotations

import sqlite3

from .fts import pieces

OLD = "messages_fts"
NEW = "messages_fts_new"
# Newest first: a search takes the newest candidates and stops once it has enough.
SHARDS = (NEW, OLD)
ROWS = {OLD: "messages_fts_old_rows", NEW: "messages_fts_new_rows"}

# The SQL name of ``fts_text``: the views' definitions use it (it is part of the schema).
FUNCTION = "mttui_fts_text"

_FTS = ("CREATE VIRTUAL TABLE {name} USING fts5 (text, content='{rows}', content_rowid='rid', "
        "tokenize='trigram', detail=none)")


def fts_text(text: str) -> str:
    """What a shard is given for ``text``: its ``pieces`` of 3 bytes or more (shorter
    ones hold no trigram), each once, in order of first appearance."""
    if not isinstance(text, str):  # never stored; a function SQLite calls must not raise
        return text
    kept = [piece for piece in dict.fromkeys(pieces(text)) if len(piece) > 2]
    return b" ".join(kept).decode("utf-8", "surrogatepass")


def fts_rows(rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``(rid, text)`` rows as a shard is given them."""
    return [(rid, fts_text(text)) for rid, text in rows]


def register(conn: sqlite3.Connection) -> None:
    """Make the views, and ``fts_text`` in SQL, usable on ``conn``."""
    conn.create_function(FUNCTION, 1, fts_text, deterministic=True)


def ddl(name: str, rows: str) -> str:
    """One shard's table (external content over ``rows``)."""
    return _FTS.format(name=name, rows=rows)


def migrate(conn: sqlite3.Connection) -> None:
    """Schema v10: the one FTS table becomes two shards (all present rows in the older
    one; their FTS rows owed until the first search, what forks owed included).
    Again as v11, whose views give each message's ``fts_text`` (its distinct words),
    and as v12 (its distinct pieces)."""
    for name in (OLD, NEW):
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute(f"DROP VIEW IF EXISTS {ROWS[name]}")
    conn.execute("DROP TABLE IF EXISTS fts_split")
    conn.execute("CREATE TABLE fts_split (one INTEGER PRIMARY KEY CHECK (one = 1), "
                 "upto INTEGER NOT NULL)")
    conn.execute("INSERT INTO fts_split (one, upto) "
                 "SELECT 1, coalesce(max(rid), 0) FROM messages")
    for name, side in ((OLD, "<="), (NEW, ">")):
        conn.execute(f"CREATE VIEW {ROWS[name]} AS SELECT rid, sess, msg_seq, "
                     f"{FUNCTION}(text) AS text FROM messages "
                     f"WHERE rid {side} (SELECT upto FROM fts_split)")
    for name in (OLD, NEW):
        conn.execute(ddl(name, ROWS[name]))
    # The FTS rows are owed, not written here: tokenizing every stored text takes seconds
    # to minutes, and a migration runs when the index is first opened (the browser would
    # show no sessions meanwhile). The first search (or doctor, edit, delete) pays.
    conn.execute("INSERT OR REPLACE INTO fts_owed (sess, upto) "
                 "SELECT sess, max(msg_seq) FROM messages GROUP BY sess")


def set_split(conn: sqlite3.Connection, upto: int) -> None:
    """Move the split; only for an index whose FTS shards are still empty."""
    conn.execute("UPDATE fts_split SET upto = ?", (upto,))


def split(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT upto FROM fts_split").fetchone()[0])


def insert_where(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    """Write the FTS rows of the messages matching ``where`` (on ``rid``, ``sess`` and
    ``msg_seq``, the views' columns)."""
    for name in SHARDS:
        conn.execute(f"INSERT INTO {name} (rowid, text) SELECT rid, text FROM {ROWS[name]} "
                     f"WHERE {where}", args)


def delete_where(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    """Drop the FTS rows of the messages matching ``where`` (their text still stored)."""
    for name in SHARDS:
        conn.execute(f"INSERT INTO {name} ({name}, rowid, text) "
                     f"SELECT 'delete', rid, text FROM {ROWS[name]} WHERE {where}", args)


def replace_text(conn: sqlite3.Connection, rid: int, old: str, new: str) -> None:
    """The FTS row of message ``rid`` now says ``new`` (before its stored text changes)."""
    name = OLD if rid <= split(conn) else NEW
    conn.execute(f"INSERT INTO {name} ({name}, rowid, text) VALUES ('delete', ?, ?)",
                 (rid, fts_text(old)))  # fmt: skip
    conn.execute(f"INSERT INTO {name} (rowid, text) VALUES (?, ?)", (rid, fts_text(new)))


def delete_all(conn: sqlite3.Connection) -> None:
    for name in SHARDS:
        conn.execute(f"INSERT INTO {name} ({name}) VALUES ('delete-all')")


def integrity_check(conn: sqlite3.Connection) -> None:
    """Raise ``sqlite3.DatabaseError`` unless every shard matches its rows exactly."""
    for name in SHARDS:
        conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('integrity-check', 1)")


def row_count(conn: sqlite3.Connection) -> int:
    """Rows in the FTS index (over both shards)."""
    return sum(int(conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0])
               for name in SHARDS)  # fmt: skip
