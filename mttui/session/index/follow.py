"""Tokenizing while the logs are still being read: the helper of a big rebuild follows.

Reading and parsing the logs runs on one core; the FTS build afterwards on two.
So that the second core is not idle meanwhile, the helper process is started
before the logs are read and builds the older shard (``shards.OLD``) from the
rows the rebuild has already committed to its temp index (in WAL mode, so the
helper reads while the rows after them are written). Rows are handed out in
steps: the helper asks for the next step (one ``want`` line on its stdout) and
gets ``go <rid>`` (tokenize up to that rowid) or ``end <rid>`` (the split:
tokenize up to it and stop).

Once every log is read, the rebuild builds the newer shard from the newest rows
down, claiming a range at a time (``claim``), while the helper goes on upwards;
where they meet is the split. Neither waits for the other at the end by more than
one step, however the two processes' speeds vary on a busy machine (a split fixed
in advance, from the log bytes, left one of them idle for up to a tenth of the
rebuild).

The rows of a log are committed only after the whole log was read, and nothing
a later log says changes them, so what the helper read is what the index holds;
the rebuild still checks the helper's row count (``rows <n>``) before using its
shard. Its progress is ``n <rowids>`` lines, like the shard builder's. It stops
(and removes its file) when its stdin ends without an ``end``: the rebuild died.
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import cjk, shards

# Rowids per step: small enough that neither side waits long for the other at the
# end, big enough that the round trips cost nothing (the helper asks for the next
# step before it tokenizes the current one).
STEP = 1000
# The rebuild's claims, in steps: a quarter of what is left between the two, within
# these bounds (each claim below the last one starts a new FTS segment).
CLAIM_STEPS = (1, 4)


class Follower:
    """The rebuild's side: hands committed rows to the helper, step by step."""

    def __init__(self, child: subprocess.Popen[str]) -> None:
        self.child = child
        self.done = 0  # rowids the helper reports tokenized
        self.rows: int | None = None  # the helper's row count, once it has finished
        self._committed = 0
        self._granted = 0
        self._floor: int | None = None  # the rows above it are the rebuild's, once read
        self._closing = False
        self._wants = 0  # requests not answered yet
        self._cond = threading.Condition()
        self._threads = [threading.Thread(target=self._serve, daemon=True),
                         threading.Thread(target=self._answer, daemon=True)]  # fmt: skip
        for thread in self._threads:
            thread.start()

    def committed(self, rid: int) -> None:
        """The rows up to ``rid`` are committed: the helper may read them."""
        with self._cond:
            self._committed = rid
            self._cond.notify_all()

    def meet(self, last: int) -> None:
        """Every row up to ``last`` is committed: from now on the rebuild claims the
        newest rows (``claim``) while the helper is granted the oldest."""
        with self._cond:
            self._floor = last  # grants are bounded by it from now on
            self._cond.notify_all()

    def claim(self) -> tuple[int, int] | None:
        """The next range ``(lo, hi]`` for the rebuild to tokenize, below the ones it
        had; None once it has met the helper's grants. If the helper is gone, the
        rebuild claims every row it was not granted (and builds its shard again)."""
        with self._cond:
            assert self._floor is not None, "meet() first"
            gap = self._floor - self._granted
            if gap <= 0:
                return None
            least, most = (n * STEP for n in CLAIM_STEPS)
            size = max(least, min(most, gap // 4))
            lo, hi = max(self._granted, self._floor - size), self._floor
            self._floor = lo
            self._cond.notify_all()  # the helper may be waiting for its ``end``
            return lo, hi

    def split(self) -> int:
        """Where the helper's shard ends, once ``claim`` has returned None."""
        with self._cond:
            return self._granted

    def position(self) -> int:
        with self._cond:
            return self.done

    def share(self, rows: int, done: int) -> int:
        """The helper's progress while the logs are read, in log bytes: what it has
        tokenized of the ``rows`` rows read from ``done`` bytes so far."""
        return self.position() * done // max(rows, 1)

    def join(self) -> None:
        for thread in self._threads:
            thread.join()

    def close(self) -> None:
        """Stop the helper if it still runs (the rebuild failed) and close its pipes."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        self.join()
        for pipe in (self.child.stdin, self.child.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def _answer(self) -> None:
        """Answer the helper's requests, each once there is something to grant."""
        into = self.child.stdin
        assert into is not None
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closing or (self._wants > 0 and (
                    self._floor is not None or self._committed > self._granted)))  # fmt: skip
                if self._closing:
                    return
                self._wants -= 1
                if self._floor is not None and self._granted >= self._floor:
                    grant = f"end {self._granted}\n"  # met: the split
                else:
                    bound = self._committed if self._floor is None else self._floor
                    self._granted = min(bound, self._granted + STEP)
                    grant = f"go {self._granted}\n"
            try:
                into.write(grant)
                into.flush()
            except (BrokenPipeError, ValueError, OSError):
                return  # the helper is gone; its exit status says so
            if grant.startswith("end"):
                return

    def _serve(self) -> None:
        """Read the helper's lines until it exits: progress, requests, its row count."""
        out = self.child.stdout
        assert out is not None
        for line in out:
            word, _, arg = line.strip().partition(" ")
            with self._cond:
                if word == "n" and arg.isdigit():
                    self.done += int(arg)
                elif word == "rows" and arg.isdigit():
                    self.rows = int(arg)
                elif word == "want":
                    self._wants += 1
                    self._cond.notify_all()
        with self._cond:  # the helper is gone: nothing more to answer
            self._closing = True
            self._cond.notify_all()


def tokenize(conn: sqlite3.Connection, read: sqlite3.Connection, table: str, name: str,
             lo: int, hi: int) -> int:
    """Add the messages ``lo < rid <= hi`` of ``table`` (read through ``read``) to FTS
    shard ``name`` and the CJK pairs on ``conn``; how many there were."""
    found = read.execute(f"SELECT rid, text FROM {table} WHERE rid > ? AND rid <= ?",
                         (lo, hi)).fetchall()  # fmt: skip
    conn.executemany(f"INSERT INTO {name} (rowid, text) VALUES (?, ?)", shards.fts_rows(found))
    cjk.add(conn, found)
    return len(found)


def run_helper(index: Path, out: Path, bulk: Callable[[sqlite3.Connection], sqlite3.Connection],
               ask: Callable[[], str], tell: Callable[[str], None]) -> int:
    """The helper's side: build the older shard of ``index`` into ``out`` from the rows
    it is granted (``ask()`` is the next line from the rebuild, ``''`` at its end)."""
    name = shards.OLD
    out.unlink(missing_ok=True)
    conn = bulk(sqlite3.connect(out))
    src: sqlite3.Connection | None = None
    try:
        conn.execute(shards.ddl(name, shards.ROWS[name]))
        conn.execute(cjk.SCHEMA)
        conn.execute("BEGIN")
        done = rows = 0
        tell("want")
        while True:
            word, _, arg = ask().strip().partition(" ")
            if word not in ("go", "end") or not arg.isdigit():
                conn.close()
                out.unlink(missing_ok=True)
                return 1  # the rebuild is gone
            if word == "go":
                tell("want")  # the next step is granted while this one is tokenized
            hi = int(arg)
            if src is None:
                src = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
            while done < hi:
                end = min(hi, done + STEP)
                rows += tokenize(conn, src, "messages", name, done, end)
                tell(f"n {end - done}")
                done = end
            if word == "end":
                break
        conn.execute("COMMIT")
        tell(f"rows {rows}")
        return 0
    except BaseException:  # the rebuild is gone (a broken pipe), or this failed
        conn.close()
        out.unlink(missing_ok=True)
        raise
    finally:
        if src is not None:
            src.close()
        conn.close()


def helper_main(index: Path, out: Path,
                bulk: Callable[[sqlite3.Connection], sqlite3.Connection]) -> int:
    def tell(line: str) -> None:
        print(line, flush=True)

    return run_helper(index, out, bulk, sys.stdin.readline, tell)
