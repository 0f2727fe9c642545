"""What a session's log says that resume needs, read without writing anything.

Two ways to the same :class:`LogFacts`:

- **from the index** (the usual case): when the index row is fresh (it has
  ingested the whole file), the log is read only from its last ``compression``
  record on, plus the messages that record kept (by their stored byte
  offsets); the journal (open dispatches, approvals, queue) comes from the
  index's projections. The cost does not grow with the messages before the
  last compression.
- **from the whole log**, when there is no usable index row.

Both are opened read-only: resolving a reference never catches the index up,
and the index is opened with ``mode=ro``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..index.ingest import session_row
from ..index.schema import open_index, open_read_only
from ..models import SessionInfo
from ..paths import Layout
from ..reader import ReadStats, first_record, read_all, read_record_at, read_records
from ..transcript import QUEUED_STATES, Transcript, fold
from .lookup import bare_info, last_open_run, resolve

if TYPE_CHECKING:
    from ..record_types import Compression, Message, Record

INDEX_VERSION_NEEDED = 2  # the schema that stores ``compression_offset``


@dataclass
class LogFacts:
    """The log's side of a resume plan (resume.md, steps 1, 2 and 4)."""

    session_id: str
    path: Path
    project_hash: str
    has_start: bool = False
    thread_id: str | None = None
    message_count: int = 0
    corrupt_lines: int = 0
    compression: Compression | None = None  # the last compression record
    # kept + after, in order (dicts: the graph rebuilds LangChain messages from them)
    view: list[dict[str, Any]] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)  # dispatched, no outcome
    dispatch_names: dict[str, str] = field(default_factory=dict)
    open_requests: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    decided: set[str] = field(default_factory=set)
    decided_calls: set[str] = field(default_factory=set)  # calls of decided requests
    requests_seen: set[str] = field(default_factory=set)
    queued: list[str] = field(default_factory=list)
    rewind_open: dict[str, Any] | None = None  # a code rewind that started and never ended
    source: str = "log"  # "index": read from the last compression on
    known: Callable[[list[str]], set[str]] | None = None
    run_probe: Callable[[], str | None] | None = None  # finds the open run when asked
    _run: list[str | None] = field(default_factory=list)

    @property
    def open_run(self) -> str | None:
        """The run id of a ``run_start`` without ``run_end`` (the apply step closes it);
        looked up only when asked: a check does not need it."""
        if not self._run:
            self._run.append(self.run_probe() if self.run_probe else None)
        return self._run[0]

    @property
    def summary(self) -> str | None:
        return None if self.compression is None else self.compression.get("summary")

    def known_ids(self, ids: list[str]) -> set[str]:
        """Which of ``ids`` are transcript messages anywhere in the log."""
        if not ids or self.known is None:
            return set()
        return self.known(ids)


def facts_from_transcript(
    t: Transcript, stats: ReadStats, *, session_id: str, path: Path, project_hash: str
) -> LogFacts:
    """Facts of a whole-log fold."""
    summary, view = t.model_view()
    all_ids = {m.get("id") for m in t.messages}
    return LogFacts(
        session_id=session_id, path=path, project_hash=project_hash, has_start=t.has_start,
        thread_id=t.thread_id, message_count=len(t.messages), corrupt_lines=stats.corrupt_lines,
        compression=t.last_compression, view=cast(list[dict[str, Any]], view),
        interrupted=t.interrupted_calls(), dispatch_names=dict(t.dispatch_names),
        open_requests=cast(list[dict[str, Any]], list(t.open_requests.values())),
        decided=set(t.decided), decided_calls={c for d in t.decided.values() for c in d},
        requests_seen=set(t.requests_seen), queued=t.queued_ids(),
        rewind_open=cast(dict[str, Any] | None, t.rewinds.open_start),
        source="log", known=lambda ids: {i for i in ids if i in all_ids},
        run_probe=lambda: t.open_run,
    )  # fmt: skip


def read_facts(path: Path, session_id: str, project_hash: str) -> LogFacts:
    """Facts from reading the whole log."""
    records, stats = read_all(path)
    return facts_from_transcript(
        fold(records), stats, session_id=session_id, path=path, project_hash=project_hash
    )


# -- the fast path ------------------------------------------------------------------
def index_facts(conn: sqlite3.Connection, info: SessionInfo) -> LogFacts | None:
    """Facts from the index plus the log's tail, or ``None`` when the index row is not
    fresh (it has not ingested exactly this file) or predates ``compression_offset``."""
    if conn.execute("PRAGMA user_version").fetchone()[0] < INDEX_VERSION_NEEDED:
        return None
    row = session_row(conn, info.id)
    try:
        st = info.path.stat()
    except FileNotFoundError:
        return None
    if (
        row is None
        or row["deleting"]
        or (row["file_size"], row["file_mtime_ns"], row["byte_offset"])
        != (st.st_size, st.st_mtime_ns, st.st_size)
        or row["compression_offset"] < 0
    ):
        return None
    sess, offset = row["sess"], row["compression_offset"]
    seed: list[Message] = []
    if offset > 0:
        comp = read_record_at(info.path, offset)
        if comp is None or comp.get("type") != "compression":
            return None
        kept = _kept_messages(conn, sess, info.path, list(comp.get("kept_message_ids") or []),
                              offset)  # fmt: skip
        if kept is None:
            return None
        seed = kept
    first = first_record(info.path)
    runs: list[Record] = []  # the tail's last run_start or run_end
    t = fold(_noting_runs(read_records(info.path, offset), runs), seed=seed)
    if t.rewinds.count and offset > 0:
        return None  # a rewind may reach before the compression: read the whole log
    summary, view = t.model_view()

    def ids(sql: str, *args: str) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = conn.execute(sql, (sess, *args)).fetchall()
        return rows

    open_tools = ids("SELECT call_id, tool_name FROM open_tools WHERE sess = ? ORDER BY rowid")
    approvals = ids(
        "SELECT request_id, run_id, tool_calls, decided FROM approvals WHERE sess = ? "
        "ORDER BY rowid"
    )
    queued = ids(
        "SELECT item_id FROM pending WHERE sess = ? AND mode = 'queue' AND state IN "
        f"({','.join('?' * len(QUEUED_STATES))}) ORDER BY position IS NULL, position, rowid",
        *QUEUED_STATES,
    )

    db = conn.execute("PRAGMA database_list").fetchone()[2]

    def known(wanted: list[str]) -> set[str]:  # called later: its own connection
        marks = ",".join("?" * len(wanted))
        other = open_read_only(Path(db))
        try:
            return {r[0] for r in other.execute(
                f"SELECT id FROM messages WHERE sess = ? AND id IN ({marks})", (sess, *wanted))}
        finally:
            other.close()

    return LogFacts(
        session_id=info.id, path=info.path, project_hash=info.project_hash,
        has_start=bool(first and first.get("type") == "session_start"),
        thread_id=row["thread_id"], message_count=row["message_count"],
        corrupt_lines=row["corrupt_lines"], compression=t.last_compression,
        view=cast(list[dict[str, Any]], view),
        interrupted=[r[0] for r in open_tools],
        dispatch_names={r[0]: r[1] or "" for r in open_tools},
        open_requests=[{"request_id": r[0], "run_id": r[1], "tool_calls": json.loads(r[2])}
                       for r in approvals if not r[3]],
        decided={r[0] for r in approvals if r[3]},
        decided_calls={str(c.get("call_id")) for r in approvals if r[3]
                       for c in json.loads(r[2])},
        requests_seen={r[0] for r in approvals},
        queued=[r[0] for r in queued], source="index", known=known,
        run_probe=_run_probe(info.path, runs, row.get("turns", 1)),
        rewind_open=cast(dict[str, Any] | None, t.rewinds.open_start),
    )  # fmt: skip


def _noting_runs(records: Iterable[tuple[int, Record]], runs: list[Record]) -> Iterator[Record]:
    """The records, keeping the last ``run_start``/``run_end`` among them in ``runs``."""
    for _, rec in records:
        if rec["type"] in ("run_start", "run_end"):
            runs[:] = [rec]
        yield rec


def _run_probe(path: Path, runs: list[Record], turns: int) -> Callable[[], str | None]:
    """How the open run is found: the tail's last run record tells; a session that never
    started a run (the index counts runs; without that count one is assumed) has none;
    else the log is read back to its last run record (a run the last compression
    happened in: just before it)."""
    if runs:
        last = runs[0]
        found = str(last.get("run_id") or "") if last["type"] == "run_start" else None
        return lambda: found
    if not turns:
        return lambda: None
    return lambda: last_open_run(path)


def _kept_messages(
    conn: sqlite3.Connection, sess: int, path: Path, kept: list[str], before: int
) -> list[Message] | None:
    """The kept messages as the whole-log fold has them (index status and text win:
    they carry every ``message_update`` before the compression).

    They are the last messages before the compression record at ``before`` (kept
    is a suffix of what the model saw), so the index is walked back from the newest
    message by ``msg_seq`` and stops once all are found: the cost is that of the
    messages after the compression plus the kept ones. ``None`` when they are not
    where they should be (the caller then reads the whole log).
    """
    wanted = set(kept)
    found: dict[str, tuple[int, int, str, str]] = {}
    cursor, passed, budget = 1 << 62, 0, 4 * len(kept) + 64
    while wanted - set(found) and passed <= budget:
        rows = conn.execute(
            "SELECT msg_seq, id, byte_offset, status, text FROM messages WHERE sess = ? "
            "AND msg_seq < ? ORDER BY msg_seq DESC LIMIT 256",
            (sess, cursor),
        ).fetchall()
        if not rows:
            break
        for seq, mid, offset, status, text in rows:
            if offset < before:
                passed += 1
                if mid in wanted:
                    found[mid] = (seq, offset, status, text)  # the earliest copy wins
        cursor = rows[-1][0]
    if wanted - set(found):
        return None
    out: list[Message] = []
    for _, offset, status, text in sorted(found.values()):
        rec = read_record_at(path, offset)
        kept_msg = None if rec is None else rec.get("message")
        if rec is None or not isinstance(kept_msg, dict):
            return None
        msg = cast("Message", dict(kept_msg))
        msg.setdefault("created_at", rec.get("timestamp"))
        msg["status"], msg["content"] = status, text
        out.append(msg)
    return out


def load_facts(layout: Layout, project_hash: str, ref: str) -> tuple[SessionInfo, LogFacts]:
    """Resolve ``ref`` and read its facts, never writing anything."""
    conn = open_index(layout)
    try:
        info = resolve(layout, project_hash, ref, conn)
        facts = index_facts(conn, info) if conn is not None else None
    finally:
        if conn is not None:
            conn.close()
    if facts is None:
        facts = read_facts(info.path, info.id, info.project_hash)
    return info, facts


def facts_for_path(path: Path, session_id: str, project_hash: str) -> LogFacts:
    """Facts of the log at ``path`` (a writer's own session): the index when it is
    fresh, else the whole log. The data home is the log's ``history/<hash>/`` parent."""
    conn = open_index(Layout(path.parent.parent.parent))
    facts = None
    if conn is not None:
        try:
            facts = index_facts(conn, bare_info(session_id, path))
        finally:
            conn.close()
    return facts or read_facts(path, session_id, project_hash)
