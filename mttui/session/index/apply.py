"""Projecting log records into index rows: one session at a time, in file order.

The same code runs for incremental catch-up and for a full rebuild, which is what
makes "incremental index == rebuilt index" hold by construction; the only switch
is ``bulk`` (a rebuild fills the FTS table once at the end instead of per row).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from ..fork_state import FORK_COPYING, FORK_DONE
from ..markers import RECORD_KINDS, marker_of
from ..pending import message_of, read_ids
from ..records import iso_timestamp, parse_timestamp, title_from_text
from . import cjk, ledger_rows, marker_rows, owed, shards
from .activity import is_activity
from .pending_rows import PendingProjection, move_to_end
from .schema import SessionRow, SQLValue

if TYPE_CHECKING:
    from ..record_types import Record

_CANON_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PREVIEW_CHARS = 120
# Pending states that still wait to run (pending.md); they make the "queued" badge.
QUEUED_STATES = ("waiting", "held", "needs_retry")
_EXTRA_KEYS = ("tool_calls", "tool_call_id", "name", "usage", "attachments")


def normalize_ts(value: object) -> str | None:
    """A record timestamp in the canonical sortable form, or ``None``."""
    if isinstance(value, str) and _CANON_TS.match(value):
        return value
    when = parse_timestamp(value) if isinstance(value, str) else None
    if when is None or when.tzinfo is None:
        return None
    return iso_timestamp(when)


def content_text(content: object) -> str:
    """Plain text of a message ``content`` (a string or LangChain content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        ]
        return "\n".join(p for p in parts if p)
    return "" if content is None else str(content)


def preview_of(text: str, extra: Mapping[str, object] | None) -> str:
    if len(text) > 4 * PREVIEW_CHARS:  # a long text: its start is enough, most often
        words = text[: 4 * PREVIEW_CHARS].split()[:-1]  # the last one may be cut
        head = " ".join(words)
        if len(head) >= PREVIEW_CHARS:  # the whole text flattens to more than this
            return head[: PREVIEW_CHARS - 1] + "…"
    flat = " ".join(text.split())
    calls = extra.get("tool_calls") if extra else None
    if not flat and calls and isinstance(calls, Iterable):
        names = [str(c.get("name", "?")) for c in calls if isinstance(c, dict)]
        flat = "[tool call: " + ", ".join(names) + "]"
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class SessionApplier:
    """Applies records of one session to its ``sessions`` row and child tables.

    ``row`` is the session's row as a dict (it must already exist, for ``sess``).
    New messages are buffered and written by :meth:`flush`; everything else is
    written as it is applied (those tables are tiny).
    """

    def __init__(self, conn: sqlite3.Connection, row: SessionRow, *, bulk: bool) -> None:
        self.conn = conn
        self.row = row
        self.sess: int = row["sess"]
        self.bulk = bulk
        # buffered ``messages`` rows: sess, msg_seq, id, role, status, created_at,
        # byte_offset, text, extra
        self._new: list[list[SQLValue]] = []
        self._new_by_id: dict[str, list[SQLValue]] = {}
        self._badges_dirty = False  # only approval/tool/pending records change badges
        self._pending: PendingProjection | None = None
        self._handlers: dict[str, Callable[[int, Record, str], None]] = {
            "session_start": self._on_session_start,
            "session_update": self._on_session_update,
            "transcript_message": self._on_transcript_message,
            "message_update": self._on_message_update,
            "approval_request": self._on_approval_request,
            "approval_decision": self._on_approval_decision,
            "tool_dispatch": self._on_tool_dispatch,
            "tool_outcome": self._on_tool_outcome,
            "compression": self._on_compression,
            "run_end": self._on_run_end,
            "session_clear": self._on_session_clear,
            "run_start": self._on_run_start,
            "grant_revoked": self._on_grant_revoked,
            "tool_resolution": self._on_tool_resolution,
        }

    # -- records ---------------------------------------------------------------
    def apply(self, offset: int, rec: Record) -> None:
        row = self.row
        ts = normalize_ts(rec.get("timestamp"))
        if ts is not None and (is_activity(rec) or not row["updated_at"]):
            row["updated_at"] = ts  # the last conversation activity (not a rename)
            if not row["created_at"]:
                row["created_at"] = ts
        kind = rec["type"]
        handler = self._handlers.get(kind)
        if handler is None and kind.startswith("pending_"):
            handler = self._on_pending
        if kind.startswith(("approval_", "tool_", "pending_")):
            self._badges_dirty = True
        if handler is not None:
            handler(offset, rec, ts or "")
        if kind in RECORD_KINDS:
            marker = marker_of(rec, row["message_count"])
            if marker is not None:
                marker_rows.add(self.conn, self.sess, marker)

    def _on_session_start(self, offset: int, rec: Record, ts: str) -> None:
        project = rec.get("project")
        if isinstance(project, str):
            self.row["project"] = project
        origin = rec.get("forked_from")
        if isinstance(origin, dict):
            self.row["forked_from"] = json.dumps(origin, ensure_ascii=False)
        self._on_session_update(offset, rec, ts)
        if rec.get("fork_state") == FORK_COPYING:
            self.row["fork_incomplete"] = 1

    def _on_session_update(self, offset: int, rec: Record, ts: str) -> None:
        row = self.row
        provider, model, title = rec.get("provider"), rec.get("model"), rec.get("title")
        if isinstance(provider, str):
            row["provider"] = provider
        if isinstance(model, str):
            row["model"] = model
        if isinstance(title, str) and title.strip():
            row["explicit_title"] = title.strip()
        if rec.get("fork_state") == FORK_DONE:
            row["fork_incomplete"] = 0
        if rec.get("chosen") is True and isinstance(model, str):
            row["chosen_model"] = model  # /model: kept across resumes
        self._thread(rec.get("thread_id"))

    def _on_run_end(self, offset: int, rec: Record, ts: str) -> None:
        usage = rec.get("usage")
        if not isinstance(usage, dict):
            return
        row = self.row
        row["input_tokens"] += _count(usage.get("input_tokens"))
        row["output_tokens"] += _count(usage.get("output_tokens"))
        cost = usage.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            row["cost_usd"] = (row["cost_usd"] or 0.0) + float(cost)

    def _on_session_clear(self, offset: int, rec: Record, ts: str) -> None:
        self.row["clear_count"] += 1
        self._thread(rec.get("thread_id"))

    def _thread(self, thread_id: object) -> None:
        if isinstance(thread_id, str) and thread_id:
            self.row["thread_id"] = thread_id
            self.conn.execute(
                "INSERT OR IGNORE INTO threads (sess, thread_id) VALUES (?, ?)",
                (self.sess, thread_id),
            )

    def _on_transcript_message(self, offset: int, rec: Record, ts: str) -> None:
        found = rec.get("message")
        if not isinstance(found, dict):
            return
        msg: Mapping[str, object] = found
        row = self.row
        row["message_count"] += 1
        seq = row["message_count"]
        usage = msg.get("usage")
        if msg.get("role") == "assistant" and isinstance(usage, dict):
            row["msg_input_tokens"] += _count(usage.get("input_tokens"))
            row["msg_output_tokens"] += _count(usage.get("output_tokens"))
        text = content_text(msg.get("content"))
        role = str(msg.get("role") or "user")
        mid = str(msg.get("id") or f"{row['id']}:{seq}")
        extra = {k: msg[k] for k in _EXTRA_KEYS if msg.get(k)}
        new: list[SQLValue] = [
            self.sess,
            seq,
            mid,
            role,
            str(msg.get("status") or "sent"),
            ts,
            offset,
            text,
            json.dumps(extra, ensure_ascii=False) if extra else None,
        ]
        self._new.append(new)
        self._new_by_id[mid] = new
        if role == "user" and not row["derived_title"]:
            row["derived_title"] = title_from_text(text) or None
        row["last_message_preview"] = preview_of(text, extra)

    def _on_message_update(self, offset: int, rec: Record, ts: str) -> None:
        mid = rec.get("message_id")
        if not isinstance(mid, str):
            return
        found_status = rec.get("status")
        status = found_status if isinstance(found_status, str) else None
        text = content_text(rec["content"]) if "content" in rec else None
        if status is None and text is None:
            return
        if status == "error":
            self._project_pending(rec, ts)  # an unread steer that was never delivered
        new = self._new_by_id.get(mid)
        if new is not None:
            new[4] = status or new[4]
            new[7] = new[7] if text is None else text
            seq, extra_json = new[1], new[8]
        else:
            found = self.conn.execute(
                "SELECT rid, msg_seq, text, extra FROM messages WHERE sess = ? AND id = ? "
                "ORDER BY msg_seq DESC LIMIT 1",
                (self.sess, mid),
            ).fetchone()
            if found is None:
                return
            rid, seq, old_text, extra_json = found
            if text is not None and not self.bulk:
                owed.pay(self.conn, self.sess)  # a fork's copied row: its FTS row first
                shards.replace_text(self.conn, rid, old_text, text)
                cjk.remove(self.conn, [(rid, old_text)])
                cjk.add(self.conn, [(rid, text)])
            self.conn.execute(
                "UPDATE messages SET status = coalesce(?, status), text = coalesce(?, text) "
                "WHERE rid = ?",
                (status, text, rid),
            )
        if text is not None and seq == self.row["message_count"]:
            extra = json.loads(extra_json) if isinstance(extra_json, str) and extra_json else None
            self.row["last_message_preview"] = preview_of(text, extra)

    def _on_approval_request(self, offset: int, rec: Record, ts: str) -> None:
        request_id = rec.get("request_id")
        if isinstance(request_id, str):
            self.conn.execute(
                "INSERT OR REPLACE INTO approvals (sess, request_id, run_id, tool_calls, "
                "requested_at, decided, decisions) VALUES (?, ?, ?, ?, ?, 0, NULL)",
                (
                    self.sess,
                    request_id,
                    rec.get("run_id"),
                    json.dumps(rec.get("tool_calls") or [], ensure_ascii=False),
                    ts,
                ),
            )

    def _on_run_start(self, offset: int, rec: Record, ts: str) -> None:
        if not rec.get("continues"):
            self.row["turns"] += 1

    def _grants(self, add: object = (), remove: object = ()) -> None:
        """The tools granted for the session (``remember``, minus ``grant_revoked``)."""
        now = set(json.loads(self.row["grants"] or "[]"))
        now |= {str(t) for t in add} if isinstance(add, list) else set()
        now -= {str(t) for t in remove} if isinstance(remove, list) else set()
        self.row["grants"] = json.dumps(sorted(now))

    def _on_grant_revoked(self, offset: int, rec: Record, ts: str) -> None:
        self._grants(remove=rec.get("tools"))

    def _on_approval_decision(self, offset: int, rec: Record, ts: str) -> None:
        if rec.get("remember"):
            self._grants(add=rec.get("remember"))
        decisions = rec.get("decisions")
        if isinstance(decisions, dict):
            ledger_rows.denied(self.conn, self.sess,
                               [str(c) for c, d in decisions.items() if d == "deny"])
        self.conn.execute(
            "UPDATE approvals SET decided = 1, decisions = ? WHERE sess = ? AND request_id = ?",
            (
                json.dumps(rec.get("decisions") or {}, ensure_ascii=False),
                self.sess,
                rec.get("request_id"),
            ),
        )

    def _on_tool_dispatch(self, offset: int, rec: Record, ts: str) -> None:
        self.row["tool_calls"] += 1
        call_id = rec.get("call_id")
        if isinstance(call_id, str):
            self.conn.execute(
                "INSERT OR REPLACE INTO open_tools (sess, call_id, run_id, tool_name, "
                "dispatched_at) VALUES (?, ?, ?, ?, ?)",
                (self.sess, call_id, rec.get("run_id"), rec.get("tool_name"), ts),
            )

    def _on_tool_outcome(self, offset: int, rec: Record, ts: str) -> None:
        self.conn.execute(
            "DELETE FROM open_tools WHERE sess = ? AND call_id = ?", (self.sess, rec.get("call_id"))
        )
        if rec.get("status") == "interrupted" and isinstance(rec.get("call_id"), str):
            ledger_rows.interrupted(self.conn, self.sess, str(rec["call_id"]))

    def _on_tool_resolution(self, offset: int, rec: Record, ts: str) -> None:
        if isinstance(rec.get("call_id"), str):
            rerun = rec.get("rerun_call_id")
            ledger_rows.settle(self.conn, self.sess, str(rec["call_id"]),
                               rerun if isinstance(rerun, str) else None)

    def _on_compression(self, offset: int, rec: Record, ts: str) -> None:
        self.row["compression_count"] += 1
        self.row["compression_offset"] = offset

    def _on_pending(self, offset: int, rec: Record, ts: str) -> None:
        """Pending inputs (pending.md; ``session.pending``): a steer or a taken queue
        item adds its user message; a steer batch read moves its messages here."""
        if message_of(rec) is not None:
            self._on_transcript_message(offset, rec, ts)
        moved = read_ids(rec)
        if moved:
            self.flush()
        for mid in moved:
            text = move_to_end(self.conn, self.sess, mid, self.row["message_count"])
            if text is not None:
                self.row["last_message_preview"] = preview_of(text, None)
        self._project_pending(rec, ts)

    def _project_pending(self, rec: Record, ts: str) -> None:
        if self._pending is None:
            self._pending = PendingProjection(self.conn, self.sess)
        self._pending.apply(rec, ts)

    # -- writing ---------------------------------------------------------------
    def flush(self) -> None:
        """Write buffered messages (and, incrementally, their FTS rows)."""
        if not self._new:
            return
        first_seq = self._new[0][1]
        self.conn.executemany(
            "INSERT INTO messages (sess, msg_seq, id, role, status, created_at, byte_offset, "
            "text, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self._new,
        )
        if not self.bulk:
            shards.insert_where(self.conn, "sess = ? AND msg_seq >= ?", (self.sess, first_seq))
            cjk.add_where(self.conn, "sess = ? AND msg_seq >= ?", (self.sess, first_seq))
        self._new.clear()
        self._new_by_id.clear()

    def finish(self) -> None:
        """Flush, derive the badges and the title, and store the session row."""
        self.flush()
        row, conn, sess = self.row, self.conn, self.sess
        row["title"] = row["explicit_title"] or row["derived_title"]
        if self._badges_dirty:
            self._count_badges()
        values: Mapping[str, object] = row
        cols = [c for c in values if c != "sess"]
        conn.execute(
            f"UPDATE sessions SET {', '.join(c + ' = ?' for c in cols)} WHERE sess = ?",
            [values[c] for c in cols] + [sess],
        )

    def _count_badges(self) -> None:
        row, conn, sess = self.row, self.conn, self.sess
        row["awaiting_approval"] = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM approvals WHERE sess = ? AND decided = 0)", (sess,)
        ).fetchone()[0]
        row["interrupted_tools"] = ledger_rows.unsettled(conn, sess)
        row["queued_count"] = conn.execute(
            "SELECT count(*) FROM pending WHERE sess = ? AND mode = 'queue' AND state IN "
            f"({','.join('?' * len(QUEUED_STATES))})",
            (sess, *QUEUED_STATES),
        ).fetchone()[0]
