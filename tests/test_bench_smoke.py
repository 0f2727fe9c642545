"""The benchmark runner at its small size prints the table with every case (no timings checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.cases import discover

ROOT = Path(__file__).resolve().parent.parent


# The cases that take longest at the small size (10-15 s each), shared out first.
_HEAVY = ("B4", "B17", "B13", "B9", "B16", "B14", "B5", "B7")


def _halves(cases: list[str]) -> tuple[list[str], list[str]]:
    """Two lists of about the same run time: the heavy cases dealt out in turn, then
    the rest."""
    order = [c for c in _HEAVY if c in cases] + [c for c in cases if c not in _HEAVY]
    return order[0::2], order[1::2]


def test_small_benchmark_prints_every_case_row() -> None:
    # two runners side by side (this machine has two cores; their timings are not
    # checked here), each over half of the cases; together they print every one
    runs = [subprocess.Popen([sys.executable, "-m", "bench.run", "--size", "small",
                              "--cases", ",".join(half)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
            for half in _halves(list(discover()))]
    lines: list[str] = []
    try:
        for run in runs:
            out, err = run.communicate(timeout=300)
            assert run.returncode == 0, err[-2000:]
            table = [line for line in out.splitlines() if line.startswith("|")]
            assert table[0].startswith("| case | baseline | mttui | ratio | target |")
            lines += table
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.wait()
    for case in discover():  # every case module printed at least one row
        assert any(line.startswith(f"| {case} ") for line in lines), case
    assert sum(line.startswith("| B2 ") for line in lines) >= 3  # rare, common, CJK


def test_unknown_case_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--cases", "B99"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "unknown case" in done.stderr
