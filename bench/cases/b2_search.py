"""B2: ranked top-50 search for a rare, a common and a CJK term over the corpus."""

from __future__ import annotations

from pathlib import Path

from ..context import Context
from ..fresh import bare_interpreter, fresh_cli
from ..textgen import CJK2, CJK4, COMMON, RARE
from ..timing import Row, fmt_time, median_time, speed_row

CASE = "B2"


def run(ctx: Context) -> list[Row]:
    data = ctx.corpus()
    paths = [f.path for f in data.files]
    rows = []
    terms = [("rare", RARE), ("common", COMMON), ("CJK 4 chars", CJK4), ("CJK 2 chars", CJK2)]
    for label, term in terms:
        needle = term.encode("utf-8")

        def baseline(needle: bytes = needle) -> None:
            hits = []
            for path in paths:
                with open(path, "rb") as fh:
                    hits += [line for line in fh if needle in line]

        def ours(term: str = term) -> None:
            assert data.service.search(term, scope="all", limit=50)

        base = median_time(baseline, ctx.params["base_repeats"], warmup=0)
        mine = median_time(ours, ctx.params["repeats"])
        rows.append(speed_row(f"B2 search {label} ({term})", base, mine, 100, 0.050))
    rows.append(fresh_row(ctx, data.home, data.project, data.messages))
    return rows


def fresh_row(ctx: Context, home: Path, project: Path, messages: int) -> Row:
    """``mttui search`` as a command: a new interpreter, its imports, the catch-up of
    every log of the project and the query (the rows above time a warm connection)."""
    repeats = max(3, ctx.params["repeats"] // 2)
    bare = bare_interpreter(ctx.root, repeats)
    mine = fresh_cli(ctx.root, home, project, ["search", RARE, "--limit", "50"], repeats)
    return Row(f"B2 `mttui search {RARE}`, fresh process, {messages:,} messages",
               f"python -c pass {fmt_time(bare)}", fmt_time(mine),
               f"+{fmt_time(mine - bare)} over the interpreter", "≤ 100.0 ms",
               mine <= 0.1)  # fmt: skip
