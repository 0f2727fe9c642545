"""Read queries on the index: the session list, one session, history pages.

Every page is keyset-paginated (never ``OFFSET``): the session list on
``(updated_at, id)``, history on ``msg_seq``.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

from ..errors import MttuiError
from ..models import (
    HistoryPage,
    MessageRow,
    SessionInfo,
    SessionPage,
    SessionStatus,
    SessionUsage,
)
from ..paths import Layout

MAX_LIMIT = 1000

SESSION_COLS = (
    "id, title, project, project_hash, path, created_at, updated_at, message_count, provider, "
    "model, thread_id, last_message_preview, compression_count, awaiting_approval, "
    "interrupted_tools, queued_count, corrupt_lines"
    ", input_tokens, output_tokens, cost_usd, chosen_model, clear_count"
    ", forked_from, fork_incomplete"
)
_MSG_COLS = "msg_seq, id, role, text, status, created_at, extra"
# a row of SESSION_COLS, and of _MSG_COLS
SessionColsRow = tuple[
    str, str | None, str, str, str, str, str, int, str | None, str | None, str | None, str,
    int, int, int, int, int,
    int, int, float | None, str | None, int,
    str, int,
]
MessageColsRow = tuple[int, str, str, str, str, str, str | None]


def clamp_limit(limit: int) -> int:
    return max(1, min(int(limit), MAX_LIMIT))


def info_from_row(layout: Layout, r: SessionColsRow) -> SessionInfo:
    return SessionInfo(
        id=r[0], title=r[1], project=r[2], project_hash=r[3],
        path=layout.history_root / Path(r[4]),
        created_at=r[5], updated_at=r[6], message_count=r[7], provider=r[8], model=r[9],
        thread_id=r[10], last_message_preview=r[11], compression_count=r[12],
        status=SessionStatus(
            awaiting_approval=bool(r[13]), interrupted_tools=r[14], queued=r[15],
            corrupt_lines=r[16],
        ),
        usage=SessionUsage(r[17], r[18], r[19]), chosen_model=r[20], clear_count=r[21],
        fork=json.loads(r[22]) if r[22] else {},  # {}: known not to be a fork
        fork_incomplete=bool(r[23]),
    )  # fmt: skip


def encode_cursor(updated_at: str, sid: str) -> str:
    raw = json.dumps([updated_at, sid], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        updated_at, sid = json.loads(raw)
        if isinstance(updated_at, str) and isinstance(sid, str):
            return updated_at, sid
    except (ValueError, TypeError):
        pass
    raise MttuiError(f"invalid session list cursor: {cursor[:40]!r}")


def list_page(
    conn: sqlite3.Connection, layout: Layout, phash: str | None, limit: int, cursor: str | None
) -> SessionPage:
    """Newest first (updated_at DESC, id DESC), ``limit`` rows after ``cursor``."""
    limit = clamp_limit(limit)
    where, args = ["deleting = 0"], []
    if phash is not None:
        where.append("project_hash = ?")
        args.append(phash)
    if cursor:
        updated_at, sid = decode_cursor(cursor)
        where.append("(updated_at < ? OR (updated_at = ? AND id < ?))")
        args += [updated_at, updated_at, sid]
    rows = conn.execute(
        f"SELECT {SESSION_COLS} FROM sessions WHERE {' AND '.join(where)} "
        "ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*args, limit + 1),
    ).fetchall()
    infos = [info_from_row(layout, r) for r in rows[:limit]]
    more = len(rows) > limit
    return SessionPage(infos, encode_cursor(infos[-1].updated_at, infos[-1].id) if more else None)


def get_info(conn: sqlite3.Connection, layout: Layout, sid: str) -> SessionInfo | None:
    r = conn.execute(
        f"SELECT {SESSION_COLS} FROM sessions WHERE id = ? AND deleting = 0", (sid,)
    ).fetchone()
    return info_from_row(layout, r) if r else None


def find_prefix(
    conn: sqlite3.Connection, layout: Layout, prefix: str, phash: str | None, limit: int = 6
) -> list[SessionInfo]:
    """Sessions whose id starts with ``prefix`` (a range scan on the unique id index)."""
    sql = f"SELECT {SESSION_COLS} FROM sessions WHERE id >= ? AND id < ? AND deleting = 0"
    args: list[str] = [prefix, prefix + "\U0010ffff"]
    if phash is not None:
        sql += " AND project_hash = ?"
        args.append(phash)
    rows = conn.execute(sql + " ORDER BY id LIMIT ?", (*args, limit)).fetchall()
    return [info_from_row(layout, r) for r in rows]


def newest_of_project(conn: sqlite3.Connection, layout: Layout, phash: str) -> SessionInfo | None:
    page = list_page(conn, layout, phash, 1, None)
    return page.sessions[0] if page.sessions else None


def _message(r: MessageColsRow) -> MessageRow:
    extra = json.loads(r[6]) if r[6] else {}
    return MessageRow(
        seq=r[0], id=r[1], role=r[2], content=r[3], status=r[4], created_at=r[5],
        tool_calls=extra.get("tool_calls"), tool_call_id=extra.get("tool_call_id"),
        name=extra.get("name"), usage=extra.get("usage"),
        attachments=extra.get("attachments"),
    )  # fmt: skip


def _older(conn: sqlite3.Connection, sess: int, below: int | None, n: int) -> list[MessageRow]:
    """Up to ``n`` messages with ``msg_seq < below`` (all when ``None``), ascending."""
    if n <= 0:
        return []
    rows = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE sess = ? AND msg_seq < ? "
        "ORDER BY msg_seq DESC LIMIT ?",
        (sess, below if below is not None else 1 << 62, n),
    ).fetchall()
    return [_message(r) for r in reversed(rows)]


def _newer(conn: sqlite3.Connection, sess: int, from_seq: int, n: int) -> list[MessageRow]:
    """Up to ``n`` messages with ``msg_seq >= from_seq``, ascending."""
    rows = conn.execute(
        f"SELECT {_MSG_COLS} FROM messages WHERE sess = ? AND msg_seq >= ? "
        "ORDER BY msg_seq LIMIT ?",
        (sess, from_seq, n),
    ).fetchall()
    return [_message(r) for r in rows]


def history_page(
    conn: sqlite3.Connection,
    sess: int,
    sid: str,
    *,
    limit: int,
    before: int | None = None,
    around: int | None = None,
    after: int | None = None,
) -> HistoryPage:
    """One keyset page, ascending. ``msg_seq`` runs 1..n without gaps, so "older
    messages exist" is simply "the first seq on the page is above 1"."""
    limit = clamp_limit(limit)
    has_newer = False
    if around is not None:
        # Half before the target, the target and the rest after it; near either end
        # the page is filled up from the other side.
        half = limit // 2
        older = _older(conn, sess, around, half)
        newer = _newer(conn, sess, around, limit - len(older) + 1)
        has_newer = len(newer) > limit - len(older)
        newer = newer[: limit - len(older)]
        if len(older) == half and len(older) + len(newer) < limit:
            older = _older(conn, sess, around, limit - len(newer))
        msgs = older + newer
    elif after is not None:
        msgs = _newer(conn, sess, after + 1, limit + 1)
        has_newer = len(msgs) > limit
        msgs = msgs[:limit]
        if not msgs:  # nothing newer: say whether older messages exist
            any_older = bool(_older(conn, sess, after + 1, 1))
            return HistoryPage(sid, [], any_older, after + 1 if any_older else None, False)
    else:
        msgs = _older(conn, sess, before, limit)
    has_more = bool(msgs) and msgs[0].seq > 1
    return HistoryPage(sid, msgs, has_more, msgs[0].seq if has_more else None, has_newer)
