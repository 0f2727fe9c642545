"""Read-only lookups for the resume check: the index as it is, the files themselves.

Nothing here writes: the index is opened ``mode=ro`` (and never caught up), a
reference is resolved from it and then from the log file names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from ..errors import SessionNotFound
from ..index import queries
from ..models import SessionInfo
from ..paths import Layout
from ..reader import parse_line, reversed_lines
from ..records import parse_session_filename
from ..refs import resolve_ref


def _on_disk(layout: Layout, phash: str | None, prefix: str) -> list[SessionInfo]:
    """Session logs whose id starts with ``prefix`` (sessions the index has not seen)."""
    dirs = [layout.project_dir(phash)] if phash else sorted(layout.history_root.glob("*"))
    found = []
    for folder in dirs:
        for path in sorted(folder.glob(f"session-*-{prefix}*.jsonl")):
            parsed = parse_session_filename(path.name)
            if parsed:
                found.append(bare_info(parsed[1], path))
    return found


def bare_info(sid: str, path: Path) -> SessionInfo:
    return SessionInfo(id=sid, title=None, project="", project_hash=path.parent.name, path=path,
                       created_at="", updated_at="", message_count=0, provider=None, model=None,
                       thread_id=None)  # fmt: skip


def resolve(
    layout: Layout, project_hash: str, ref: str, conn: sqlite3.Connection | None
) -> SessionInfo:
    """Resolve ``ref`` like ``SessionService.resolve`` but read-only: the index as it
    is, then the files themselves. Raises :class:`SessionNotFound`."""

    def lookup(phash: str | None) -> Callable[[str], list[SessionInfo]]:
        def find(prefix: str) -> list[SessionInfo]:
            hits = queries.find_prefix(conn, layout, prefix, phash) if conn else []
            return hits or _on_disk(layout, phash, prefix)

        return find

    def newest() -> SessionInfo | None:
        info = queries.newest_of_project(conn, layout, project_hash) if conn else None
        if info is not None:
            return info
        logs = list(layout.project_dir(project_hash).glob("session-*.jsonl"))
        if not logs:
            return None
        path = max(logs, key=lambda p: p.stat().st_mtime_ns)
        parsed = parse_session_filename(path.name)
        return bare_info(parsed[1], path) if parsed else None

    info = resolve_ref(ref, newest=newest, in_project=lookup(project_hash), everywhere=lookup(None))
    if not info.path.exists():
        raise SessionNotFound(f"session {info.id} has no log file any more")
    return info


def last_open_run(path: Path) -> str | None:
    """The run id of a ``run_start`` with no ``run_end`` after it (the newest run)."""
    for raw in reversed_lines(path):
        if b'"run_start"' not in raw[:80] and b'"run_end"' not in raw[:80]:
            continue
        rec = parse_line(raw)
        if rec is None or rec["type"] not in ("run_start", "run_end"):
            continue
        return str(rec.get("run_id") or "") if rec["type"] == "run_start" else None
    return None
