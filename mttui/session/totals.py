"""What a runner needs of a session's whole log, as the index keeps it.

A runner used to read the whole log when it opened a session (stats for
``session_end``, the tools granted for the session, the approval requests already
written): seconds on a million-message log. The service hands these over from the
index when the index has read the whole file; otherwise the runner reads the log.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from .index.pending_rows import load_lane
from .pending import Lane
from .plain import Plain, field


class LogTotals(Plain):
    turns: int = 0
    tool_calls: int = 0
    input_tokens: int = 0  # of the assistant messages (the session_end stats)
    output_tokens: int = 0
    grants: frozenset[str] = field(default_factory=frozenset)  # remembered, not revoked
    requests: frozenset[str] = field(default_factory=frozenset)  # approval request ids


def indexed_totals(conn: sqlite3.Connection, sess: int) -> LogTotals | None:
    """The totals of session ``sess`` from the index (``None`` when it has no row)."""
    row = conn.execute(
        "SELECT turns, tool_calls, msg_input_tokens, msg_output_tokens, grants FROM sessions "
        "WHERE sess = ?", (sess,)).fetchone()  # fmt: skip
    if row is None:
        return None
    requests = {r[0] for r in conn.execute(
        "SELECT request_id FROM approvals WHERE sess = ?", (sess,))}  # fmt: skip
    grants = json.loads(row[4] or "[]")
    return LogTotals(int(row[0]), int(row[1]), int(row[2]), int(row[3]),
                     frozenset(str(g) for g in grants), frozenset(requests))


def indexed_thread(conn: sqlite3.Connection, sess: int) -> str | None:
    """The session's current thread id as the index has it."""
    row = conn.execute("SELECT thread_id FROM sessions WHERE sess = ?", (sess,)).fetchone()
    return str(row[0]) if row is not None and row[0] else None


def indexed_lane(conn: sqlite3.Connection, sess: int) -> Lane:
    """Every pending item of the session (not only the active ones), as the index has it."""
    return load_lane(conn, sess, everything=True)


def project_grants(conn: sqlite3.Connection, phash: str) -> dict[str, list[str]]:
    """The tools granted (remembered, not revoked) by session id, for the sessions of
    project ``phash`` that have any, newest first."""
    rows = conn.execute(
        "SELECT id, grants FROM sessions WHERE project_hash = ? AND deleting = 0 "
        "AND grants != '[]' ORDER BY updated_at DESC, id DESC", (phash,))
    return {r[0]: json.loads(r[1]) for r in rows}


def indexed_open(conn: sqlite3.Connection, sess: int) -> tuple[LogTotals | None, Lane]:
    """The totals and the pending lane, read in one visit."""
    return indexed_totals(conn, sess), indexed_lane(conn, sess)


class OpenState:
    """What a writer's readers take from the index when a session opens (the runner's
    totals, the pending lane), read in one visit to the index for both. Each is handed
    out once (the lane is changed by its user); an append drops what was read."""

    def __init__(self, read: Callable[[], tuple[LogTotals | None, Lane] | None],
                 index_file: Callable[[Path], None]) -> None:
        self._read = read
        self._index_file = index_file  # the service's update of the index after an append
        self._found: tuple[LogTotals | None, Lane] | None = None
        self._taken: set[int] = set()

    def _take(self, part: int) -> tuple[LogTotals | None, Lane] | None:
        if self._found is None or part in self._taken:
            self._found, self._taken = self._read(), set()
        self._taken.add(part)
        return self._found

    def totals(self) -> LogTotals | None:
        found = self._take(0)
        return None if found is None else found[0]

    def lane(self) -> Lane | None:
        found = self._take(1)
        return None if found is None else found[1]

    def appended(self, path: Path) -> None:
        """The writer's ``on_append``: what was read is stale; the index is updated."""
        self._found = None
        self._index_file(path)
