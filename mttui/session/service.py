"""SessionService: the one entry point the CLI and the UI use for sessions."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from .errors import IndexTooNew, MttuiError, SessionNotFound
from .fork_state import incomplete_row, refuse_incomplete, start_fields
from .index import ingest, marker_rows, owed, queries
from .index.handle import IndexFile
from .index.ingest import ingest_file, rel_path, session_row
from .index.schema import SessionRow
from .index.search import ScopeKey
from .index.search import search as index_search
from .log import SessionLog
from .markers import Marker
from .models import (
    DoctorReport,
    HistoryPage,
    MessageRow,
    ReindexResult,
    SearchHit,
    SearchScope,
    SessionInfo,
    SessionPage,
)
from .paths import Layout, ensure_dir, project_hash
from .reader import ReadStats, first_record, read_all, read_records
from .records import new_id, new_session_id, session_filename, utc_now
from .refs import resolve_ref
from .totals import OpenState, indexed_open, indexed_thread, project_grants
from .usage import last_usage
from .warn import warn
from .writer import SessionWriter

if TYPE_CHECKING:
    from .record_types import Record

APP_VERSION = "0.1.0"
T = TypeVar("T")


class SessionService:
    """Sessions of one data home, seen from one project directory.

    Safe to share between threads (one lock around the index connection). The
    index is opened lazily; nothing happens at construction.

    Freshness: this process's own appends reach the index right after each fsync.
    The first read of a service catches up with the logs (other processes'
    changes); after that, call :meth:`catch_up` to see new ones. Reads of one
    session (``get``, ``history``, ``records``, ``export``, a session-scoped
    ``search``) always refresh that session's file first, which costs one ``stat``.
    """

    def __init__(self, home: Path, project: Path) -> None:
        self.layout = Layout(Path(home))
        self.project = Path(project).expanduser().resolve()
        self.project_hash = project_hash(self.project)
        self._lock = threading.RLock()
        self._index = IndexFile(self.layout, self._lock)
        self._fresh: set[bool] = set()  # scopes caught up so far: all_projects False/True

    # -- writing -------------------------------------------------------------
    def project_dir(self) -> Path:
        self.layout.ensure()
        return ensure_dir(self.layout.project_dir(self.project_hash))

    def checkpoints_path(self) -> Path:
        return self.layout.checkpoints_path(self.project_hash)

    def create_session(self, *, provider: str, model: str, title: str | None = None,
                       forked_from: dict[str, object] | None = None) -> SessionWriter:
        """Create a new session file with its ``session_start`` and hold its lock."""
        sid = new_session_id()
        path = self.project_dir() / session_filename(sid, utc_now())
        log = SessionLog.create(path, sid)
        writer = self._writer(log, thread_id=new_id("thread"))
        try:
            writer.append(
                "session_start", v=1, thread_id=writer.thread_id, project=str(self.project),
                project_hash=self.project_hash, provider=provider, model=model, title=title,
                app_version=APP_VERSION, **start_fields(forked_from),
            )  # fmt: skip
        except BaseException:
            # no session_start (a full disk): no session, rather than an empty one
            writer.close()
            path.unlink(missing_ok=True)
            raise
        return writer

    def open_session(self, path: Path) -> SessionWriter:
        """Open an existing session log for writing; raises ``SessionLocked``, and
        ``ForkIncomplete`` for a fork whose copy never finished (fork_state.py)."""
        start = first_record(path)
        sid = (start or {}).get("session_id") or path.stem.rsplit("-", 1)[-1]
        log = SessionLog.open(path, sid)
        try:
            refuse_incomplete(path, start, lambda: self._with_indexed(path, sid, incomplete_row))
            thread_id = self._with_indexed(path, sid, indexed_thread)
            if thread_id is None:  # the index is behind or unreadable: ask the log
                thread_id = (start or {}).get("thread_id")
                for _, rec in read_records(path):
                    if rec.get("type") == "session_update" and rec.get("thread_id"):
                        thread_id = rec["thread_id"]
        except BaseException:
            log.close()
            raise
        return self._writer(log, thread_id=thread_id)

    def _with_indexed(self, path: Path, session_id: str,
                      read: Callable[[sqlite3.Connection, int], T]) -> T | None:
        """``read(conn, sess)`` on the index once it has ingested the whole file (else
        ``None``): spares full reads of a long log when it is opened for writing."""
        self._index_file(path)
        with self._lock:
            try:
                conn = self._db()
                row = conn.execute(
                    "SELECT sess, byte_offset FROM sessions WHERE id = ? AND path = ?",
                    (session_id, rel_path(self.layout, path))).fetchone()  # fmt: skip
                if row is None or row[1] != path.stat().st_size:
                    return None
                return read(conn, int(row[0]))
            except (sqlite3.Error, ValueError, OSError):
                return None

    def _writer(self, log: SessionLog, *, thread_id: str | None) -> SessionWriter:
        # what the writer's readers may take from the index instead of the log
        path, sid = log.path, log.session_id
        state = OpenState(lambda: self._with_indexed(path, sid, indexed_open), self._index_file)
        writer = SessionWriter(log, thread_id=thread_id, project=str(self.project),
                               project_hash=self.project_hash, on_append=state.appended)
        writer.totals_source, writer.lane_source = state.totals, state.lane
        return writer

    # -- the index -----------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        """The index connection, (re)opened when the file is new, replaced or unreadable."""
        conn, new = self._index.get()
        if new:
            self._fresh.clear()
        return conn

    def close(self) -> None:
        """Close the index connection (it reopens on the next call)."""
        self._index.close()

    def _index_file(self, path: Path) -> None:
        """Bring the index up to date with one file right after an append (fsynced).

        The log is the source of truth: if the index cannot be updated now (busy,
        unreadable), the append still stands and the next catch-up repairs it.
        """
        with self._lock:
            try:
                ingest_file(self._db(), self.layout, path, tail_is_final=False)
            except (sqlite3.Error, OSError, MttuiError) as exc:
                warn(__name__, "index not updated for %s: %s", path.name, exc)

    def catch_up(self, *, all_projects: bool = False) -> bool:
        """Refresh the index from the logs of the project (or of all projects): stat
        every file, read only new bytes, ingest new files, drop vanished ones and
        finish half-done deletes.

        Read methods catch up automatically the first time they are used on this
        service; call this to see other processes' later changes. ``True`` if the
        index changed.
        """
        with self._lock:
            conn = self._db()
            try:
                changed = ingest.catch_up(
                    conn, self.layout, None if all_projects else self.project_hash,
                    lambda row: self._finish_delete(conn, row),
                )  # fmt: skip
            except sqlite3.OperationalError as exc:
                # Busy past the timeout (e.g. another process rebuilding): answer
                # from the index as it is rather than fail a read.
                warn(__name__, "index catch-up skipped: %s", exc)
                return False
            self._fresh.add(all_projects)
            return changed

    def _finish_delete(self, conn: sqlite3.Connection, row: SessionRow) -> None:
        from .delete import finish_delete  # rare: a delete that crashed half-way

        finish_delete(conn, self.layout, row)

    def _ensure_fresh(self, all_projects: bool = False) -> sqlite3.Connection:
        conn = self._db()
        if True not in self._fresh and all_projects not in self._fresh:
            self.catch_up(all_projects=all_projects)
        return conn

    def _row(self, session_id: str) -> SessionRow:
        """The session's index row, refreshed from its file; raises ``SessionNotFound``.

        A session the index knows needs no catch-up of the project: its own file is
        read up to date below.
        """
        conn = self._db()
        row = session_row(conn, session_id)
        if row is None or row["deleting"]:
            self._ensure_fresh()
            row = session_row(conn, session_id)
        if row is None or row["deleting"]:
            self._ensure_fresh(all_projects=True)
            row = session_row(conn, session_id)
        if row is None or row["deleting"]:
            raise SessionNotFound(f"no session {session_id!r}")
        path = self.layout.history_root / row["path"]
        if not path.exists():
            self.catch_up(all_projects=True)
            raise SessionNotFound(f"session {session_id} has no log file any more")
        if ingest_file(conn, self.layout, path):
            row = session_row(conn, session_id) or row
        return row

    # -- reading -------------------------------------------------------------
    def list_sessions(
        self, *, all_projects: bool = False, limit: int = 50, cursor: str | None = None,
        fresh: bool = True,
    ) -> SessionPage:
        """Newest first (updated_at DESC, id DESC); pass ``next_cursor`` for the next page.

        ``fresh=False`` answers from the index as it is, without the first catch-up
        (a screen shows that at once and catches up after it).
        """
        with self._lock:
            conn = self._ensure_fresh(all_projects) if fresh else self._db()
            phash = None if all_projects else self.project_hash
            page = queries.list_page(conn, self.layout, phash, limit, cursor)
        return page.with_forks()

    def get(self, session_id: str) -> SessionInfo:
        with self._lock:
            self._row(session_id)
            info = queries.get_info(self._db(), self.layout, session_id)
            assert info is not None
            return info

    def resolve(self, ref: str) -> SessionInfo:
        """A full id, a unique prefix (>= 4 characters) or ``last``; see ``refs``."""
        with self._lock:
            conn = self._ensure_fresh()

            def everywhere(prefix: str) -> list[SessionInfo]:
                self._ensure_fresh(all_projects=True)
                return queries.find_prefix(conn, self.layout, prefix, None)

            info = resolve_ref(
                ref,
                newest=lambda: queries.newest_of_project(conn, self.layout, self.project_hash),
                in_project=lambda p: queries.find_prefix(conn, self.layout, p, self.project_hash),
                everywhere=everywhere,
            )
            return self.get(info.id)

    def history(
        self,
        session_id: str,
        *,
        limit: int = 50,
        before: int | None = None,
        around: int | None = None,
        after: int | None = None,
    ) -> HistoryPage:
        """A keyset page of messages, ascending (default: the newest ``limit``)."""
        with self._lock:
            row = self._row(session_id)
            return queries.history_page(
                self._db(), row["sess"], session_id,
                limit=limit, before=before, around=around, after=after,
            )  # fmt: skip

    def search(self, query: str, *, scope: SearchScope | str = "project",
               session_id: str | None = None, limit: int = 50,
               indexing: Callable[[int], None] | None = None) -> list[SearchHit]:
        """Ranked hits (``index.search.search``) in scope ``session``, ``project`` or
        ``all`` (a ``session_id`` implies ``session``). ``indexing(n)`` is told first when
        ``n`` messages (enough to take seconds) still need their FTS rows (a fork's, an
        upgraded index's)."""
        if scope not in ("session", "project", "all"):
            raise MttuiError(f"unknown search scope {scope!r} (use session, project or all)")
        with self._lock:
            key: ScopeKey = None
            if session_id is not None or scope == "session":
                if session_id is None:
                    raise MttuiError("searching one session needs its id")
                scope, key = "session", self._row(session_id)["sess"]
            elif scope == "project":
                key = self.project_hash
            conn = self._ensure_fresh(scope == "all")
            if indexing is not None and (due := owed.due(conn)) >= owed.NOTE_FROM:
                indexing(due)
            owed.pay(conn)  # copied messages of a fork become searchable
            return index_search(conn, query, scope=cast(SearchScope, scope), key=key, limit=limit)

    def records(self, session_id: str) -> tuple[list[Record], ReadStats]:
        """Every readable record of a session, with what the read skipped."""
        with self._lock:
            path = self.layout.history_root / self._row(session_id)["path"]
        return read_all(path)

    def grants(self, session_id: str | None = None) -> dict[str, list[str]]:
        """Tools granted for the session (remembered, not revoked), by session id: of one
        session, or of every session of the project that has any. From the index."""
        with self._lock:
            if session_id is not None:
                row = self._row(session_id)
                return {row["id"]: json.loads(row["grants"] or "[]")}
            return project_grants(self._ensure_fresh(), self.project_hash)

    def markers(self, session_id: str) -> list[Marker]:
        """The session's compression and resume markers, placed among its messages
        (from the index: the log is not read)."""
        with self._lock:
            row = self._row(session_id)
            return marker_rows.load(self._db(), row["sess"])

    def last_usage(self, session_id: str) -> tuple[int, bool] | None:
        """``(tokens, estimated)``: the newest assistant usage in the last 50 messages."""
        return last_usage(self.history(session_id, limit=50))

    def export(self, session_id: str, fmt: str = "markdown") -> Iterator[str]:
        """The session as ``markdown`` or ``jsonl`` text chunks (streamed)."""
        if fmt not in ("markdown", "jsonl"):
            raise MttuiError(f"unknown export format {fmt!r} (use markdown or jsonl)")
        from .export import export_jsonl, export_markdown

        info = self.get(session_id)
        if fmt == "jsonl":
            return export_jsonl(info.path)
        return export_markdown(info, self._iter_messages(session_id))

    def _iter_messages(self, session_id: str) -> Iterator[MessageRow]:
        seq, batch = 0, 500
        while True:
            with self._lock:
                page = self.history(session_id, after=seq, limit=batch)
            yield from page.messages
            if not page.has_newer:
                return
            seq = page.messages[-1].seq

    # -- changing ------------------------------------------------------------
    def open_writer(self, session_id: str) -> SessionWriter:
        """Open a session for writing by id; raises ``SessionLocked``/``SessionNotFound``."""
        return self.open_session(self.get(session_id).path)

    def rename(self, session_id: str, title: str) -> None:
        """Append ``session_update {title}`` (takes the write lock: ``SessionLocked``)."""
        title = " ".join(title.split())
        if not title:
            raise MttuiError("a session title cannot be empty")
        with self.open_writer(session_id) as writer:
            writer.append("session_update", title=title)

    def delete(self, session_id: str) -> None:
        """Staged delete (see ``delete``); raises ``SessionLocked`` if it is being written."""
        from .delete import delete_session

        with self._lock:
            delete_session(self._db(), self.layout, self._row(session_id))

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> ReindexResult:
        """Rebuild the index from the logs; ``progress(done, total)`` counts bytes.
        Half-done deletes are finished first (a rebuild would resurrect them), unless
        a newer mttui wrote the index. Built without the lock: writers keep appending."""
        from .delete import finish_all

        with self._lock:
            try:  # no index yet: no delete to finish (and none is made for it)
                if self.layout.index_path.exists():
                    finish_all(self._db(), self.layout)
            except IndexTooNew:
                warn(__name__, "rebuilding over an index that a newer mttui wrote")
        result = ingest.rebuild(self.layout, progress, self._swap_in)
        with self._lock:
            self._fresh.update((True, False))
        return result

    def _swap_in(self, built: Path, live: Path) -> None:
        with self._lock:
            self._index.swap_in(built)

    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check every log against the index; ``repair`` finishes deletes, fixes
        permissions and rebuilds the index."""
        from .doctor import run_doctor  # its checks are imported only for it

        with self._lock:
            return run_doctor(self.layout, self._db(), self.reindex, repair=repair)

