"""The index database: connection settings and ordered schema migrations.

The schema version lives in ``PRAGMA user_version``; migration *n* brings a
database from version *n - 1* to *n*. The index is derived data, so a database
written by a newer mttui is refused with a clear message instead of guessed at.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias, TypedDict

from ..errors import IndexTooNew
from ..paths import FILE_MODE, Layout, secure_file
from . import cjk, ledger_rows, marker_rows, owed, shards, users

BUSY_TIMEOUT_MS = 5000

SQLValue: TypeAlias = str | int | float | bytes | None

# Messages keep their text once (``messages.text``); the FTS table is external
# content over it with ``detail=none``: trigram doclists without positions are
# ~1x the text instead of ~3x. Phrases are impossible then, so a query token
# becomes an AND of its trigrams and candidates are confirmed with ``instr``.
_V1 = """
CREATE TABLE sessions (
    sess INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL DEFAULT '',
    project_hash TEXT NOT NULL,
    path TEXT NOT NULL,
    title TEXT,
    explicit_title TEXT,
    derived_title TEXT,
    provider TEXT,
    model TEXT,
    thread_id TEXT,
    created_at TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL DEFAULT '',
    message_count INTEGER NOT NULL DEFAULT 0,
    last_message_preview TEXT NOT NULL DEFAULT '',
    awaiting_approval INTEGER NOT NULL DEFAULT 0,
    interrupted_tools INTEGER NOT NULL DEFAULT 0,
    queued_count INTEGER NOT NULL DEFAULT 0,
    corrupt_lines INTEGER NOT NULL DEFAULT 0,
    unknown_types INTEGER NOT NULL DEFAULT 0,
    seq_gaps INTEGER NOT NULL DEFAULT 0,
    compression_count INTEGER NOT NULL DEFAULT 0,
    byte_offset INTEGER NOT NULL DEFAULT 0,
    last_seq INTEGER NOT NULL DEFAULT 0,
    torn_tail INTEGER NOT NULL DEFAULT 0,
    file_size INTEGER NOT NULL DEFAULT 0,
    file_mtime_ns INTEGER NOT NULL DEFAULT 0,
    deleting INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_project_updated ON sessions (project_hash, updated_at DESC, id DESC);
CREATE INDEX sessions_updated ON sessions (updated_at DESC, id DESC);

CREATE TABLE messages (
    rid INTEGER PRIMARY KEY,
    sess INTEGER NOT NULL,
    msg_seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    byte_offset INTEGER NOT NULL,
    text TEXT NOT NULL,
    extra TEXT
);
CREATE UNIQUE INDEX messages_seq ON messages (sess, msg_seq);

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text, content='messages', content_rowid='rid', tokenize='trigram', detail=none
);

CREATE TABLE approvals (
    sess INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    run_id TEXT,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    requested_at TEXT NOT NULL DEFAULT '',
    decided INTEGER NOT NULL DEFAULT 0,
    decisions TEXT,
    PRIMARY KEY (sess, request_id)
);
CREATE TABLE open_tools (
    sess INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    run_id TEXT,
    tool_name TEXT,
    dispatched_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (sess, call_id)
);
CREATE TABLE pending (
    sess INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    position INTEGER,
    created_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (sess, item_id)
);
CREATE TABLE threads (
    sess INTEGER NOT NULL,
    thread_id TEXT NOT NULL,
    PRIMARY KEY (sess, thread_id)
);
"""


class SessionRow(TypedDict):
    """A ``sessions`` row (``SELECT *``), as ingest keeps it up to date."""

    sess: int
    id: str
    project: str
    project_hash: str
    path: str
    title: str | None
    explicit_title: str | None
    derived_title: str | None
    provider: str | None
    model: str | None
    thread_id: str | None
    created_at: str
    updated_at: str
    message_count: int
    last_message_preview: str
    awaiting_approval: int
    interrupted_tools: int
    queued_count: int
    corrupt_lines: int
    unknown_types: int
    seq_gaps: int
    compression_count: int
    byte_offset: int
    last_seq: int
    torn_tail: int
    file_size: int
    file_mtime_ns: int
    deleting: int
    compression_offset: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    chosen_model: str | None
    clear_count: int
    turns: int
    tool_calls: int
    msg_input_tokens: int
    msg_output_tokens: int
    grants: str
    forked_from: str
    fork_incomplete: int


def _run_script(script: str) -> Callable[[sqlite3.Connection], None]:
    # Statement by statement: ``executescript`` would COMMIT the migration's transaction.
    def run(conn: sqlite3.Connection) -> None:
        for stmt in script.split(";\n"):
            if stmt.strip():
                conn.execute(stmt)

    return run


# v2: the byte offset of the last ``compression`` record, so that a resume check
# reads a log only from there on (-1: unknown in an index migrated from v1; such a
# session is read in full until the next reindex).
_V2 = """
ALTER TABLE sessions ADD COLUMN compression_offset INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET compression_offset = -1 WHERE compression_count > 0
"""

_V1_TABLES = ("messages", "approvals", "open_tools", "pending", "threads")


def _redo(tables: tuple[str, ...], only: str | None = None) -> str:
    """SQL that drops sessions with everything derived from them, so that the next
    catch-up re-reads their logs: those ``only`` selects (a ``SELECT sess …``), or
    every session. Sessions half-way through a delete keep their row (the catch-up
    finishes the delete instead of reading the file again).
    """
    if only is None:  # everything: emptied at once, not row by row
        return ";\n".join([
            "INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')",
            *(f"DELETE FROM {t}" for t in tables),
            "DELETE FROM sessions WHERE deleting = 0",
        ])  # fmt: skip
    return ";\n".join([
        f"CREATE TEMP TABLE redo AS {only}",
        "INSERT INTO messages_fts (messages_fts, rowid, text) "
        "SELECT 'delete', rid, text FROM messages WHERE sess IN (SELECT sess FROM redo)",
        *(f"DELETE FROM {t} WHERE sess IN (SELECT sess FROM redo)" for t in tables),
        "DELETE FROM sessions WHERE sess IN (SELECT sess FROM redo)",
        "DROP TABLE redo",
    ])  # fmt: skip


# v3: pending inputs as ``session.pending`` folds them (queue order, steer messages,
# failures). Sessions projected by v1/v2 are dropped here and re-read from their logs
# by the next catch-up (their ``pending_*`` records meant something else then).
_V3 = """
ALTER TABLE pending ADD COLUMN message_id TEXT;
ALTER TABLE pending ADD COLUMN error TEXT;
""" + _redo(_V1_TABLES, "SELECT DISTINCT p.sess FROM pending p JOIN sessions s "
                        "ON s.sess = p.sess WHERE s.deleting = 0")

# v4: usage totals of the runs (``run_end.usage``; ``cost_usd`` null until a run is
# priced), the model chosen with ``/model`` and the number of ``/clear``s. Sessions
# indexed before are re-read from their logs by the next catch-up.
_V4 = """
ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cost_usd REAL;
ALTER TABLE sessions ADD COLUMN chosen_model TEXT;
ALTER TABLE sessions ADD COLUMN clear_count INTEGER NOT NULL DEFAULT 0;
""" + _redo(_V1_TABLES)

# v5: what a runner needs of a long log without reading it (the ``session_end`` stats
# and the tools granted for the session), kept like every other column.
_V5 = """
ALTER TABLE sessions ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN tool_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN msg_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN msg_output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN grants TEXT NOT NULL DEFAULT '[]';
""" + _redo(_V1_TABLES)

# v7: the history's markers (compressions, resumes with warnings, clears, rewinds:
# marker_rows.py), so opening a chat reads no log; ``forked_from`` of the
# ``session_start``, so listing reads no first lines. Every session is re-read by the
# next catch-up, which also recomputes ``updated_at`` as the last conversation
# activity (older versions moved it on a rename).
_V7 = marker_rows.SCHEMA + """;
ALTER TABLE sessions ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
""" + _redo((*_V1_TABLES, "cjk_grams", "markers"))

def _v13(conn: sqlite3.Connection) -> None:
    """v13: a fork whose copy never finished (its ``session_start`` says ``fork_state:
    copying`` and no ``session_update`` says ``done``). Forks made before had no such
    field and are complete: nothing needs reading again. (The column may be there
    already: an index rolled back to an older version number by hand, in tests.)"""
    if "fork_incomplete" not in {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}:
        conn.execute("ALTER TABLE sessions ADD COLUMN fork_incomplete INTEGER NOT NULL "
                     "DEFAULT 0")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _run_script(_V1), _run_script(_V2), _run_script(_V3), _run_script(_V4), _run_script(_V5),
    cjk.migrate,  # v6: CJK character pairs for 2-character queries
    _run_script(_V7),  # v7: markers, forked_from; every session read again
    owed.migrate,  # v8: FTS rows a fast fork still owes
    ledger_rows.migrate,  # v9: interrupted and settled tool calls (the ⚠ badge)
    shards.migrate,  # v10: the FTS index in two shards (a rebuild uses two cores)
    shards.migrate,  # v11: a shard is given each message's distinct words (shards.fts_text)
    shards.migrate,  # v12: ... its distinct pieces, cut at punctuation too
    _v13,  # v13: a fork whose copy never finished
]
SCHEMA_VERSION = len(MIGRATIONS)

# Tables holding per-session rows (the surrogate key ``sess``), for deletes.
SESSION_TABLES = (*_V1_TABLES, "markers")


def connect(path: Path, *, bulk: bool = False) -> sqlite3.Connection:
    """Open (creating and migrating) the index at ``path``: the live index, under the
    shared lock of its users (``users``) unless ``bulk``.

    ``bulk`` is for building a fresh index in a private temp file: no journal,
    no fsync, a big cache; the file is worthless if the process dies, which is fine.
    """
    if bulk:
        return _connect(path, bulk=True)
    return users.open_shared(path, lambda: _connect(path, bulk=False))


def _connect(path: Path, *, bulk: bool) -> users.HeldConnection:
    new = not path.exists()
    if new:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    secure_file(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           factory=users.HeldConnection)  # fmt: skip
    conn.isolation_level = None  # explicit BEGIN/COMMIT only
    shards.register(conn)
    try:
        if bulk:
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA cache_size=-262144")
        else:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    for suffix in ("-wal", "-shm"):
        secure_file(path.with_name(path.name + suffix))
    return conn


def open_index(layout: Layout) -> sqlite3.Connection | None:
    """The index opened read-only, or ``None`` when there is none (nothing is created)."""
    if not layout.index_path.exists():
        return None
    try:
        conn = open_read_only(layout.index_path)
    except sqlite3.Error:
        return None
    try:
        conn.execute("SELECT 1 FROM sessions LIMIT 1")
    except sqlite3.Error:
        conn.close()
        return None
    return conn


def open_read_only(path: Path) -> sqlite3.Connection:
    """The live index at ``path``, read-only, under the shared lock of its users."""

    def opener() -> users.HeldConnection:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5,
                               factory=users.HeldConnection)  # fmt: skip
        shards.register(conn)
        return conn

    return users.open_shared(path, opener)


def _enable_wal(conn: sqlite3.Connection) -> None:
    import sqlite_utils  # the index is "managed with sqlite-utils"; imported only here

    sqlite_utils.Database(conn).enable_wal()


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the missing migrations in order, each in its own transaction."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise IndexTooNew(
            f"the session index was written by a newer mttui (schema {version}); "
            "run `mttui reindex` with this version to rebuild it"
        )
    while version < SCHEMA_VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                MIGRATIONS[version](conn)
                version += 1
                conn.execute(f"PRAGMA user_version={version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
