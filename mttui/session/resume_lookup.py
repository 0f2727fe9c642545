"""Read-only lookups for the resume check: the index as it is, the files themselves.

Nothing here writes: the index is opened ``mode=ro`` (and never caught up), a
reference is resolved from it and then from the log file names.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import SessionNotFound
from .index import queries
from .models import SessionInfo
from .paths import Layout
from .reader import parse_line
from .records import parse_session_filename
from .refs import resolve_ref


def open_index(layout: Layout) -> sqlite3.Connection | None:
    """The index opened read-only, or ``None`` when there is none (nothing is created)."""
    if not layout.index_path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{layout.index_path}?mode=ro", uri=True, timeout=5)
        conn.execute("SELECT 1 FROM sessions LIMIT 1")
    except sqlite3.Error:
        return None
    return conn


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


def reversed_lines(path: Path, chunk: int = 65536) -> Iterator[bytes]:
    """The file's lines from the last to the first."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            buf = fh.read(end - start) + rest
            lines = buf.split(b"\n")
            rest = lines[0] if start > 0 else b""
            yield from reversed(lines if start == 0 else lines[1:])
            end = start


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
