"""Timing helpers: medians of repeated runs, and the result row of one case."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


def median_time(fn: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    """Median wall time of ``fn`` in seconds over ``repeats`` runs after ``warmup``."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fmt_signed(seconds: float) -> str:
    """A time difference with its sign: ``+12.0 ms``, ``−41.1 ms``."""
    return ("+" if seconds >= 0 else "−") + fmt_time(abs(seconds))


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1_000_000:.0f} µs"


@dataclass
class Row:
    """One line of the results table."""

    case: str
    baseline: str
    mttui: str
    ratio: str
    target: str
    met: bool | None  # None: informational, no target

    def cells(self) -> list[str]:
        verdict = "—" if self.met is None else ("yes" if self.met else "**no**")
        return [self.case, self.baseline, self.mttui, self.ratio, self.target, verdict]


def speed_row(case: str, baseline: float, ours: float, min_ratio: float, max_s: float) -> Row:
    """A "how many times faster" row with both the ratio and the absolute target."""
    ratio = baseline / ours if ours > 0 else float("inf")
    target = f"≥ {min_ratio:,.0f}× and ≤ {fmt_time(max_s)}"
    return Row(case, fmt_time(baseline), fmt_time(ours), f"{ratio:,.0f}×", target,
               ratio >= min_ratio and ours <= max_s)  # fmt: skip
