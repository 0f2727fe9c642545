"""``mttui doctor``: check every log and the index, report problems, optionally repair.

Checking is read-only (no catch-up first, or "missing from the index" could never
be seen). Codes: ``corrupt_lines``, ``seq_gap``, ``unknown_record_types``,
``no_session_start``, ``permissions``, ``not_indexed``, ``wrong_field_types``
(fields left out of readable records), ``index_stale`` (the index disagrees with
the file's readable content), ``missing_file`` (index row without a log),
``delete_unfinished``, ``index_corrupt``, ``fork_incomplete`` (a fork whose copy was
interrupted: session/fork_state.py). Repair finishes deletes, fixes
permissions and rebuilds the index from the logs.

Each session's resume verdict comes from the log-only plan (resume.md; no
LangGraph): a session that ran turns but whose execution state is gone is
reported with the refusal code (``checkpoint_not_found``, ``missing_thread_id``:
only its transcript can be resumed), a log without a readable ``session_start`` as
``session_empty``. Plain execution resumes and sessions that never ran (stopped
before their first message: they simply continue) are fine.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import checkpoint_store, fork_state
from .delete import finish_delete
from .index import owed, shards
from .index.ingest import rel_path, session_files, session_row
from .models import DoctorReport, Problem, ReindexResult
from .paths import DIR_MODE, FILE_MODE, Layout
from .pending import message_of
from .reader import ReadStats, read_all
from .records import parse_session_filename
from .resume.check import plan_from_log
from .transcript import fold

if TYPE_CHECKING:
    from .record_types import Record


def _problem(sid: str | None, code: str, message: str) -> Problem:
    return {"session_id": sid, "code": code, "message": message}


def _index_problems(conn: sqlite3.Connection) -> list[Problem]:
    try:
        ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        if ok:
            owed.pay(conn)  # a fork's FTS rows still owed are no corruption
            shards.integrity_check(conn)
    except sqlite3.DatabaseError:
        ok = False
    return [] if ok else [_problem(None, "index_corrupt", "the index fails its integrity check")]


def check(
    layout: Layout, conn: sqlite3.Connection
) -> tuple[int, list[Problem], list[str]]:
    """``(sessions checked, problems, paths with bad permissions)``."""
    problems = _index_problems(conn)
    indexed = {
        r[1]: r
        for r in conn.execute(
            "SELECT id, path, message_count, corrupt_lines, deleting FROM sessions"
        )
    }
    bad_modes: list[str] = []
    checked = 0
    threads: dict[str, set[str]] = {}
    for path, st in session_files(layout, None):
        checked += 1
        sid = parse_session_filename(path.name)[1]  # type: ignore[index]
        records, stats = read_all(path)
        phash = path.parent.name
        if phash not in threads:
            threads[phash] = checkpoint_store.thread_ids(layout.checkpoints_path(phash))
        problems += _resume_verdict(sid, records, stats, threads[phash])
        if stats.corrupt_lines:
            problems.append(
                _problem(sid, "corrupt_lines", f"{stats.corrupt_lines} line(s) cannot be read"
                         + _where(stats, "cannot be read", "torn"))
            )  # fmt: skip
        if stats.bad_fields:
            problems.append(
                _problem(sid, "wrong_field_types", f"{stats.bad_fields} record(s) with fields of "
                         "the wrong type (ignored)" + _where(stats, "(ignored)"))
            )  # fmt: skip
        if fork_state.incomplete(records):
            problems.append(_problem(sid, "fork_incomplete",
                                     fork_state.incomplete_text(sid, named=False)))
        if stats.seq_gaps:
            problems.append(_problem(sid, "seq_gap", f"{stats.seq_gaps} gap(s) in seq"))
        if stats.unknown_types:
            problems.append(
                _problem(
                    sid, "unknown_record_types", f"{stats.unknown_types} record(s) of unknown type"
                )
            )
        if not records or records[0].get("type") != "session_start":
            problems.append(
                _problem(sid, "no_session_start", "the log does not start with session_start")
            )
        if st.st_mode & 0o777 != FILE_MODE:
            bad_modes.append(str(path))
            problems.append(_problem(sid, "permissions", f"{path.name} is not mode 0600"))
        row = indexed.pop(rel_path(layout, path), None)
        messages = sum(1 for r in records if message_of(r) is not None)  # pending.md too
        if row is None:
            problems.append(_problem(sid, "not_indexed", "the log is missing from the index"))
        elif not row[4] and row[2] != messages:
            problems.append(
                _problem(sid, "index_stale", f"index has {row[2]} messages, the log {messages}")
            )
    for folder in (layout.home, layout.history_root):
        if folder.exists() and folder.stat().st_mode & 0o777 != DIR_MODE:
            bad_modes.append(str(folder))
            problems.append(_problem(None, "permissions", f"{folder.name}/ is not mode 0700"))
    left = _rebuild_leftovers(layout)
    if left:
        mb = sum(_size(p) for p in left) / 1e6
        what = f"a rebuild that was killed left {len(left)} file(s), {mb:,.1f} MB"
        problems.append(_problem(None, "rebuild_leftover", f"{what} ({left[0].name})"))
    for rel, row in indexed.items():
        if row[4]:
            problems.append(_problem(row[0], "delete_unfinished", "a delete was interrupted"))
        else:
            problems.append(_problem(row[0], "missing_file", f"{rel} no longer exists"))
    return checked, problems, bad_modes


def _rebuild_leftovers(layout: Layout, *, remove: bool = False) -> list[Path]:
    """The files of killed rebuilds (``remove``: removed now)."""
    from .index import parallel_build
    from .index.ingest import REBUILD_PREFIX

    find = parallel_build.remove_stale if remove else parallel_build.stale
    return sorted(find(layout.home, REBUILD_PREFIX))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # removed meanwhile
        return 0


def _where(stats: ReadStats, *kinds: str) -> str:
    """``: line 7 (…); line 9 (…)`` — the first few lines of these kinds."""
    named = [p for p in stats.problems if any(k in p for k in kinds)][:5]
    return (": " + "; ".join(named)) if named else ""


def _resume_verdict(
    sid: str, records: list[Record], stats: ReadStats, threads: set[str]
) -> list[Problem]:
    """The resume verdict as a problem, when resuming would lose something."""
    t = fold(records)
    plan = plan_from_log(sid, t, stats, checkpoint_found=(t.thread_id or "") in threads)
    if plan.refusal is None or not t.has_start:
        return []  # plain execution; a log without session_start is reported already
    ran = any(r.get("type") == "run_start" for r in records)
    if plan.mode == "transcript" and not ran:
        return []  # never ran: there was no execution state to lose
    what = "cannot be resumed" if plan.mode == "refused" else "only its transcript can be resumed"
    return [_problem(sid, plan.refusal["code"], f"{what}: {plan.refusal['message']}")]


def run_doctor(
    layout: Layout,
    conn: sqlite3.Connection,
    reindex: Callable[[], ReindexResult],
    *,
    repair: bool,
) -> DoctorReport:
    """Check (and with ``repair``, repair) with the index connection ``conn``;
    ``reindex`` rebuilds the index (the service's, so its freshness is kept)."""
    checked, problems, bad_modes = check(layout, conn)
    repaired: list[Problem] = []
    if not repair:
        return DoctorReport(checked, problems, repaired)
    for p in problems:
        sid = p["session_id"]
        if p["code"] == "delete_unfinished" and sid is not None:
            row = session_row(conn, sid)
            if row is not None:
                finish_delete(conn, layout, row)
                repaired.append(_problem(sid, "delete_finished", "delete completed"))
    for name in bad_modes:
        os.chmod(name, DIR_MODE if os.path.isdir(name) else FILE_MODE)
        repaired.append(_problem(None, "permissions", f"{os.path.basename(name)} fixed"))
    left = _rebuild_leftovers(layout, remove=True)  # the rebuild would, unreported
    if left:
        repaired.append(_problem(None, "rebuild_leftover", f"{len(left)} file(s) removed"))
    result = reindex()
    repaired.append(
        _problem(
            None,
            "reindexed",
            f"index rebuilt: {result.sessions} sessions, {result.messages} messages",
        )
    )
    return DoctorReport(checked, problems, repaired)
