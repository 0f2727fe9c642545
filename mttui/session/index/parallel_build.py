"""The full-text half of a rebuild, on two cores.

Once a fresh index holds its ``messages`` rows, each FTS shard (``shards``) and
the CJK pairs of its rows are built into a scratch file of their own: the newer
shard by a helper process, the older one here, both reading the index's rows
(only reading: neither holds a write lock on it). In a big rebuild the helper has
started before the logs were read and builds the older shard instead, following
the rows as they are committed (``follow``); this process then builds the newer
one from the newest rows down, and the split is where the two meet. Their tables
are then copied into the index with the split, which is cheap next to tokenizing.
If the helper cannot run or fails, its shard is built here afterwards, so a
rebuild never depends on it.

Progress is counted in messages tokenized, by both processes together.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import cjk, shards, users
from .follow import Follower, helper_main, tokenize

# Rows per statement (the progress is reported between them): about 1/64 of a
# shard, within bounds.
CHUNK_MIN, CHUNK_MAX = 16, 2000

# Below this many bytes of logs both shards are built here: starting the helper
# would cost more than it saves.
HELPER_FROM_BYTES = 4_000_000

Report = Callable[[int], None]  # messages tokenized so far, both shards together


def _bulk(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.isolation_level = None
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")
    return conn


Claim = Callable[[], tuple[int, int] | None]  # the next rows (lo, hi] to tokenize


def build_shard(index: Path, out: Path, name: str, lo: int, hi: int,
                report: Callable[[int], None]) -> None:
    """FTS shard ``name`` and CJK pairs of the messages ``lo < rid <= hi`` of ``index``,
    written into the new file ``out``; ``report(n)`` after each ``n`` rows."""
    chunk = max(CHUNK_MIN, min(CHUNK_MAX, (hi - lo) // 64))
    ranges = iter([(start, min(hi, start + chunk)) for start in range(lo, hi, chunk)])
    build_claimed(index, out, name, lambda: next(ranges, None), report)


def build_claimed(index: Path, out: Path, name: str, claim: Claim,
                  report: Callable[[int], None]) -> None:
    """FTS shard ``name`` and CJK pairs of the rows of ``index`` that ``claim()`` hands
    out, range by range until it returns None, written into the new file ``out``."""
    out.unlink(missing_ok=True)
    conn = _bulk(sqlite3.connect(out))
    try:
        conn.execute("ATTACH ? AS src", (f"file:{index}?mode=ro",))
        conn.execute(shards.ddl(name, shards.ROWS[name]))
        conn.execute(cjk.SCHEMA)
        conn.execute("BEGIN")
        while (got := claim()) is not None:
            tokenize(conn, conn, "src.messages", name, *got)
            report(got[1] - got[0])
        conn.execute("COMMIT")
    finally:
        conn.close()


def split_point(conn: sqlite3.Connection, marks: list[tuple[int, int]], half: int) -> int:
    """The rowid with about ``half`` of the log bytes at or before it, from ``marks``
    (``(last rowid, log bytes)`` after each file, in rowid order); inside the file
    that crosses it, by the messages' byte offsets (a few rowid lookups)."""
    before_rid, before = 0, 0
    for end_rid, end in marks:
        if end >= half:
            lo, hi = before_rid, end_rid  # the answer is in [lo, hi]
            while lo < hi:
                mid = (lo + hi + 1) // 2
                found = conn.execute(
                    "SELECT byte_offset FROM messages WHERE rid = ?", (mid,)).fetchone()
                if found is not None and before + int(found[0]) > half:
                    hi = mid - 1
                else:
                    lo = mid
            return lo
        before_rid, before = end_rid, end
    return before_rid


def forward(progress: Callable[[int, int], None]) -> Callable[[int, int], None]:
    """``progress(done, total)`` told only of moves forward (its parts are counted apart:
    while the logs are read, the helper's share is an estimate)."""
    most = [-1]

    def report(done: int, total: int) -> None:
        if done > most[0]:
            most[0] = done
            progress(done, total)

    return report


def spawn_helper(index: Path, out: Path, *args: int | str) -> subprocess.Popen[str] | None:
    """``python -m`` this module: the newer shard of rows ``lo hi``, or ``follow``."""
    package_root = str(Path(__file__).resolve().parents[3])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", __name__, str(index), str(out), *map(str, args)],
            stdin=subprocess.PIPE if "follow" in args else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env)  # fmt: skip
    except OSError:
        return None


def _follow(child: subprocess.Popen[str], add: Callable[[int], None]) -> threading.Thread:
    """A thread adding up the helper's reports (one number per line)."""

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip().isdigit():
                add(int(line))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def fill(index: Path, upto: int, last: int, report: Report | None = None, *,
         log_bytes: int, follower: Follower | None = None) -> None:
    """Build both shards of ``index`` (rows ``<= upto`` old, up to ``last`` new), the
    CJK pairs and the split; the FTS tables must be empty. ``log_bytes`` (the size of
    the logs read) decides whether a helper is worth it. A ``follower`` is a helper
    already building the older shard (``follow``): the split is then where it meets
    this process building the newer one downwards, and ``upto`` is not used."""
    scratch = {name: index.with_name(f"{index.name}.{name}") for name in shards.SHARDS}
    done = [0, 0, 0]  # rows tokenized here, by the helper; the most ever reported
    lock = threading.Lock()

    def tell() -> None:  # on the caller's thread only, never going back
        with lock:
            if follower is not None and ok is not False:
                done[1] = follower.position()
            done[2] = max(done[2], done[0] + done[1])
        if report is not None:
            report(done[2])

    def count(who: int) -> Callable[[int], None]:
        def add(n: int) -> None:
            with lock:
                done[who] += n
            if who == 0:
                tell()

        return add

    child = None
    ok: bool | None = None  # the helper's shard is built (None: not known yet)
    try:
        if follower is not None:
            child, reader = follower.child, None
            follower.meet(last)
            build_claimed(index, scratch[shards.NEW], shards.NEW, follower.claim, count(0))
            upto = follower.split()
            theirs = (shards.OLD, 0, upto)
        else:
            helper = last > upto and log_bytes >= HELPER_FROM_BYTES
            child = spawn_helper(index, scratch[shards.NEW], upto, last) if helper else None
            reader = _follow(child, count(1)) if child is not None else None
            theirs = (shards.NEW, upto, last)
            build_shard(index, scratch[shards.OLD], shards.OLD, 0, upto, count(0))
        if child is not None:
            while child.poll() is None:  # the helper's progress meanwhile
                tell()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(0.1)
            (reader or follower).join()  # type: ignore[union-attr]
            ok = child.returncode == 0
            if follower is not None:
                ok = ok and follower.rows == _rows(index, 0, upto)
        if not ok:  # no helper, or it failed: its shard is built here
            with lock:
                ok, done[1] = False, 0  # its rows are counted again as they are built here
            build_shard(index, scratch[theirs[0]], *theirs, count(0))
        _copy_in(index, scratch, upto)
    finally:
        if child is not None and child.poll() is None:  # interrupted: the helper goes too
            child.kill()
            child.wait()
        if follower is not None:
            follower.close()
        for path in scratch.values():
            path.unlink(missing_ok=True)


def _rows(index: Path, lo: int, hi: int) -> int:
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM messages WHERE rid > ? AND rid <= ?",
                                (lo, hi)).fetchone()[0])  # fmt: skip
    finally:
        conn.close()


def start_follower(index: Path) -> Follower | None:
    """The helper of a big rebuild, started before the logs are read (``follow``)."""
    out = index.with_name(f"{index.name}.{shards.OLD}")
    child = spawn_helper(index, out, "follow")
    if child is None:
        return None
    return Follower(child)


def _copy_in(index: Path, scratch: dict[str, Path], upto: int) -> None:
    conn = _bulk(sqlite3.connect(index))
    try:
        alias = {name: f"shard{i}" for i, name in enumerate(scratch)}
        for name, path in scratch.items():
            conn.execute(f"ATTACH ? AS {alias[name]}", (str(path),))
        conn.execute("BEGIN")
        shards.set_split(conn, upto)
        conn.execute("DELETE FROM cjk_grams")
        for name, src in alias.items():
            for part in ("data", "idx", "docsize"):  # the shard's own tables, as built
                conn.execute(f"DELETE FROM main.{name}_{part}")
                conn.execute(f"INSERT INTO main.{name}_{part} SELECT * FROM {src}.{name}_{part}")
            conn.execute(f"INSERT INTO main.cjk_grams SELECT * FROM {src}.cjk_grams")
        conn.execute("COMMIT")
    finally:
        conn.close()


def stale(folder: Path, prefix: str) -> list[Path]:
    """The ``<prefix><pid>.*`` files (a rebuild's temp file and its scratch files) of
    rebuilds whose process is gone (killed, say: its helper then finished its file
    and nobody removed it)."""
    found = []
    for path in folder.glob(f"{prefix}*"):
        pid = path.name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not users.alive(int(pid)):
            found.append(path)
    return found


def remove_stale(folder: Path, prefix: str) -> list[Path]:
    """Remove the files :func:`stale` finds; those it removed."""
    found = stale(folder, prefix)
    for path in found:
        path.unlink(missing_ok=True)
    return found


def _main(argv: list[str]) -> int:
    if argv[2:] == ["follow"]:
        return helper_main(Path(argv[0]), Path(argv[1]), _bulk)
    index, out, lo, hi = Path(argv[0]), Path(argv[1]), int(argv[2]), int(argv[3])

    def tell(n: int) -> None:
        print(n, flush=True)

    build_shard(index, out, shards.NEW, lo, hi, tell)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
