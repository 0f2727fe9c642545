"""B8: ``reindex`` throughput over the corpus (measured while building it)."""

from __future__ import annotations

from ..context import Context
from ..timing import Row

CASE = "B8"


def run(ctx: Context) -> list[Row]:
    data = ctx.corpus()
    result = data.reindex
    rate = result.messages / result.seconds
    return [Row(f"B8 reindex {result.messages:,} messages", "—",
                f"{rate:,.0f} msg/s ({result.seconds:.1f} s)", "—", "≥ 10,000 msg/s",
                rate >= 10_000)]  # fmt: skip
