"""Run the benchmarks and print one Markdown table: ``python -m bench.run [--size small|full]``.

``--busy`` runs every case beside a CPU-bound process (one of this machine's two
cores taken all along): baselines and mttui alike, so the ratios stay comparable.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .cases import discover
from .context import SIZES, Context
from .timing import Row


def table(rows: list[Row]) -> str:
    head = ["case", "baseline", "mttui", "ratio", "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


@contextlib.contextmanager
def _beside_a_busy_process(busy: bool) -> Iterator[None]:
    if not busy:
        yield
        return
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--cases", default="", help="comma-separated ids, e.g. B1,B3")
    parser.add_argument("--busy", action="store_true",
                        help="run beside a CPU-bound process (B4 measures that itself)")
    args = parser.parse_args(argv)
    cases = discover()
    wanted = [c.strip().upper() for c in args.cases.split(",") if c.strip()] or list(cases)
    unknown = [c for c in wanted if c not in cases]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(cases)}")
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="mttui-bench-") as tmp:
        ctx = Context(args.size, Path(tmp))
        with _beside_a_busy_process(args.busy):
            for case in wanted:
                sys.stderr.write(f"running {case}\n")
                rows += cases[case](ctx)
    print(table(rows))
    print()
    versions = f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    total = time.perf_counter() - started
    beside = "; beside a CPU-bound process" if args.busy else ""
    print(f"size `{args.size}`{beside}; times are medians; {versions}; {total:.0f} s in total.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
