"""The benchmark runner at its small size prints the table with every case (no timings checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.cases import discover

ROOT = Path(__file__).resolve().parent.parent


def test_small_benchmark_prints_every_case_row() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.run", "--size", "small"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    ).stdout  # fmt: skip
    lines = [line for line in out.splitlines() if line.startswith("|")]
    assert lines[0].startswith("| case | baseline | mttui | ratio | target |")
    for case in discover():  # every case module printed at least one row
        assert any(line.startswith(f"| {case} ") for line in lines), case
    assert sum(line.startswith("| B2 ") for line in lines) >= 3  # rare, common, CJK


def test_unknown_case_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--cases", "B99"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "unknown case" in done.stderr
