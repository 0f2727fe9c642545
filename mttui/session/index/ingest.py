"""Bringing the index up to date with the logs: one file, a catch-up scan, a rebuild."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from ..lock import is_locked
from ..models import ReindexResult
from ..paths import Layout
from ..reader import ReadStats, read_records
from ..records import parse_session_filename
from . import cjk, ledger_rows, owed, shards
from .known_logs import known_logs
from .schema import SESSION_TABLES, SessionRow, connect
from .swap import swap_in

# New messages are written in chunks so a huge file never sits in memory whole.
_FLUSH_EVERY = 20_000
# How often reading one file reports its offset (a rebuild's progress inside a huge log).
_REPORT_EVERY = 1000

Progress = Callable[[int, int], None]

# A big rebuild commits its rows for the helper to read at least every so many log bytes.
_COMMIT_BYTES = 1 << 20

# The share of a rebuild's progress bar given to the FTS build, in % of the log bytes.
_FTS_SHARE = 100


def rel_path(layout: Layout, path: Path) -> str:
    """Paths are stored relative to the history root, so a moved home still works."""
    return path.relative_to(layout.history_root).as_posix()


def session_row(conn: sqlite3.Connection, sid: str) -> SessionRow | None:
    cur = conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,))
    found = cur.fetchone()
    if found is None:
        return None
    return cast(SessionRow, dict(zip([d[0] for d in cur.description], found, strict=True)))


def remove_session_rows(conn: sqlite3.Connection, sess: int) -> None:
    """Drop a session and everything derived from it (FTS first: it needs the text)."""
    owed.pay(conn, sess)  # FTS rows a fork still owes are written, then dropped with the rest
    ledger_rows.remove(conn, sess)
    shards.delete_where(conn, "sess = ?", (sess,))
    cjk.remove_where(conn, "sess = ?", (sess,))
    for table in SESSION_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE sess = ?", (sess,))
    conn.execute("DELETE FROM sessions WHERE sess = ?", (sess,))


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` unless the caller already holds a transaction.

    Taking the write lock before reading the stored offset is what keeps two
    processes catching up the same file from ingesting the same bytes twice.
    """
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def ingest_file(
    conn: sqlite3.Connection,
    layout: Layout,
    path: Path,
    *,
    bulk: bool = False,
    tail_is_final: bool | None = None,
    reading: Callable[[int], None] | None = None,
) -> bool:
    """Ingest what is new in one log since the stored offset; ``True`` if anything changed.

    A partial last line is left alone while the file's writer is alive and counted
    as corrupt once it is not (``tail_is_final`` overrides the lock probe). Because
    the offset of such a counted torn line is kept, a later read re-examines it:
    if a writer completed the line meanwhile, it is un-counted and read.
    ``reading(offset)`` is told how far the read got, every so many records.
    """
    parsed = parse_session_filename(path.name)
    if parsed is None:
        return False
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    sid, rel = parsed[1], rel_path(layout, path)
    known = session_row(conn, sid)  # a cheap look before taking the write lock
    if (
        known is not None
        and known["path"] == rel
        and _unchanged(
            known["file_size"], known["file_mtime_ns"], known["byte_offset"], known["torn_tail"], st
        )
    ):
        return False
    with transaction(conn):
        row = session_row(conn, sid)
        if row is not None:
            if row["deleting"]:
                return False
            if row["path"] != rel:
                if (layout.history_root / row["path"]).exists():
                    return False  # two files claim one id: the first one indexed wins
                remove_session_rows(conn, row["sess"])
                row = None
            elif _unchanged(row["file_size"], row["file_mtime_ns"], row["byte_offset"],
                            row["torn_tail"], st):  # fmt: skip
                return False
            elif st.st_size < row["byte_offset"]:  # rewritten or truncated: start over
                remove_session_rows(conn, row["sess"])
                row = None
        if row is None:
            conn.execute(
                "INSERT INTO sessions (id, project_hash, path) VALUES (?, ?, ?)",
                (sid, path.parent.name, rel),
            )
            row = session_row(conn, sid)
            assert row is not None
        row["file_size"], row["file_mtime_ns"] = st.st_size, st.st_mtime_ns
        _read_into(conn, row, path, bulk=bulk, tail_is_final=tail_is_final, reading=reading)
        return True


def _unchanged(size: int, mtime_ns: int, offset: int, torn: int, st: os.stat_result) -> bool:
    """Nothing to read: same size and mtime, and no partial tail still to judge.

    A tail left alone because its writer was alive is looked at again even when
    the file did not change: the writer may have died since.
    """
    return (size, mtime_ns) == (st.st_size, st.st_mtime_ns) and (offset >= size or bool(torn))


def _read_into(
    conn: sqlite3.Connection,
    row: SessionRow,
    path: Path,
    *,
    bulk: bool,
    tail_is_final: bool | None,
    reading: Callable[[int], None] | None = None,
) -> None:
    from .apply import SessionApplier  # only a log that changed is read (a fresh CLI
    #                                     process whose logs are all indexed skips it)

    final = (not is_locked(path)) if tail_is_final is None else tail_is_final
    row["corrupt_lines"] -= row["torn_tail"]
    row["torn_tail"] = 0
    applier = SessionApplier(conn, row, bulk=bulk)
    stats = ReadStats()
    records = read_records(
        path, row["byte_offset"], prev_seq=row["last_seq"], tail_is_final=False, stats=stats
    )
    for count, (offset, rec) in enumerate(records, 1):
        applier.apply(offset, rec)
        if count % _FLUSH_EVERY == 0:
            applier.flush()
        if reading is not None and count % _REPORT_EVERY == 0:
            reading(offset)  # the byte offset reached in the file
    row["byte_offset"] = stats.end_offset
    row["corrupt_lines"] += stats.corrupt_lines
    row["unknown_types"] += stats.unknown_types
    row["seq_gaps"] += stats.seq_gaps
    row["last_seq"] = stats.last_seq or row["last_seq"]
    if final:
        with open(path, "rb") as fh:
            fh.seek(stats.end_offset)
            tail = fh.read()
        if tail.strip():
            row["corrupt_lines"] += 1
            row["torn_tail"] = 1
    applier.finish()


def scan(layout: Layout, phash: str | None) -> Iterator[tuple[str, str, os.stat_result]]:
    """``(relative path, absolute path, stat)`` of every session log of one project
    (or of all). Plain strings: a catch-up over 10 000 files must not pay for
    ``Path`` objects."""
    root = str(layout.history_root)
    if phash is not None:
        dirs = [phash]
    else:
        try:
            with os.scandir(root) as it:
                dirs = [e.name for e in it if e.is_dir()]
        except FileNotFoundError:
            return
    for folder in dirs:
        try:
            with os.scandir(os.path.join(root, folder)) as it:
                entries = [
                    e for e in it if e.name.startswith("session-") and e.name.endswith(".jsonl")
                ]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            with contextlib.suppress(FileNotFoundError):
                yield f"{folder}/{entry.name}", entry.path, entry.stat()


def session_files(layout: Layout, phash: str | None) -> Iterator[tuple[Path, os.stat_result]]:
    """Every session log of one project (or of all), with its ``stat``."""
    for _, path, st in scan(layout, phash):
        if parse_session_filename(os.path.basename(path)):
            yield Path(path), st


def catch_up(
    conn: sqlite3.Connection,
    layout: Layout,
    phash: str | None,
    finish_delete: Callable[[SessionRow], None],
) -> bool:
    """Cheap refresh: stat every log, read only new bytes, drop vanished files;
    ``True`` if any session changed.

    Sessions marked ``deleting`` (a delete that crashed half-way) are handed to
    ``finish_delete``; their files are never re-ingested.
    """
    changed = False
    known = known_logs(conn, phash)
    seen: set[str] = set()
    for rel, path, st in scan(layout, phash):
        seen.add(rel)
        old = known.get(rel)
        if old is not None and (old[4] or _unchanged(old[2], old[3], old[5], old[6], st)):
            continue
        changed = ingest_file(conn, layout, Path(path)) or changed
    for rel, old in known.items():
        if old[4] or rel not in seen:
            row = session_row(conn, old[0])
            if row is None:
                continue
            changed = True
            if row["deleting"]:
                finish_delete(row)
            else:
                with transaction(conn):
                    remove_session_rows(conn, row["sess"])
    return changed


REBUILD_PREFIX = ".index-rebuild-"  # + the rebuilding process's pid


def rebuild(layout: Layout, progress: Progress | None = None,
            swap: Callable[[Path, Path], None] = swap_in) -> ReindexResult:
    """Rebuild the whole index from the logs and swap it in.

    Built in a private temp file, then put in the live index's place by ``swap``
    (renamed when nobody has it open, else copied in atomically for those who have).
    ``progress(done, total)`` counts bytes of log read (plus a share for the FTS
    build at the end), for a progress bar.
    """
    from . import parallel_build  # only a rebuild needs it (and its subprocess import)

    started = time.perf_counter()
    layout.ensure()
    parallel_build.remove_stale(layout.home, REBUILD_PREFIX)
    tmp = layout.home / f"{REBUILD_PREFIX}{os.getpid()}.sqlite"
    tmp.unlink(missing_ok=True)
    try:
        sessions, messages, corrupt = build_index(layout, tmp, progress)
        swap(tmp, layout.index_path)
    finally:
        tmp.unlink(missing_ok=True)
    return ReindexResult(sessions, messages, corrupt, time.perf_counter() - started)


def build_index(
    layout: Layout, target: Path, progress: Progress | None = None
) -> tuple[int, int, int]:
    """Build a fresh index of every log into ``target``: (sessions, messages, corrupt).

    Fast pragmas (no fsync), files in order of last change so that the most
    recently active sessions get the highest message rowids (search ranks the
    newest matches), the FTS shards and CJK pairs filled on two cores: in a big
    rebuild the helper tokenizes the older rows while newer logs are read (``follow``;
    the split is where it meets this process going down from the newest rows), else
    both at the end (``parallel_build``).
    """
    from . import parallel_build

    files = sorted(session_files(layout, None), key=lambda f: (f[1].st_mtime_ns, f[0].name))
    read_total = sum(st.st_size for _, st in files)
    total = read_total + _FTS_SHARE * read_total // 100
    if progress is not None:
        progress = parallel_build.forward(progress)
    conn = connect(target, bulk=True)
    follower = None
    marks: list[tuple[int, int]] = []  # (last rowid, log bytes read) after each file
    try:
        # A helper follows a big rebuild, reading what is committed meanwhile (WAL);
        # not when one log is most of it (its rows are committed only once it is read).
        biggest = max((st.st_size for _, st in files), default=0)
        if (read_total >= parallel_build.HELPER_FROM_BYTES and biggest <= read_total // 2
                and conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"):
            follower = parallel_build.start_follower(target)
            if follower is None:
                conn.execute("PRAGMA journal_mode=OFF")
        done = committed = 0
        every = max(_COMMIT_BYTES, read_total // 200)
        conn.execute("BEGIN")
        for path, st in files:
            reading = None if progress is None else _reading(progress, done, total)
            ingest_file(conn, layout, path, bulk=True, reading=reading)
            done += st.st_size
            marks.append((conn.execute("SELECT coalesce(max(rid), 0) FROM messages").fetchone()[0],
                          done))  # fmt: skip
            if follower is not None and done - committed >= every:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
                follower.committed(marks[-1][0])
                committed = done
            if progress is not None:  # the helper's part of the FTS share meanwhile
                progress(done + (follower.share(marks[-1][0], done) if follower else 0), total)
        conn.execute("COMMIT")
        # Without a helper following, the split is where half of the log bytes are;
        # with one, it is where the two meet (``parallel_build.fill``).
        upto = 0 if follower else parallel_build.split_point(conn, marks, read_total // 2)
        row = conn.execute(
            "SELECT count(*), coalesce(sum(message_count), 0), "
            "coalesce(sum(corrupt_lines), 0) FROM sessions"
        ).fetchone()
    except BaseException:
        if follower is not None:
            follower.close()
        raise
    finally:
        conn.close()
    last = marks[-1][0] if marks else 0

    def tokenized(n: int) -> None:
        if progress is not None:
            progress(read_total + (total - read_total) * n // max(last, 1), total)

    parallel_build.fill(target, upto, last, tokenized, log_bytes=read_total, follower=follower)
    if progress is not None:
        progress(total, total)
    return int(row[0]), int(row[1]), int(row[2])


def _reading(progress: Progress, before: int, total: int) -> Callable[[int], None]:
    """Progress inside one file: the bytes of the files before it plus its offset."""

    def report(offset: int) -> None:
        progress(before + offset, total)

    return report
