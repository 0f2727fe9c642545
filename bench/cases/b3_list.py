"""B3: list the newest 50 sessions of a project with many sessions."""

from __future__ import annotations

import json
import os

from ..context import Context
from ..fresh import bare_interpreter, fresh_cli
from ..timing import Row, fmt_time, median_time, speed_row

CASE = "B3"


def _first_and_last(path: str) -> tuple[dict, dict]:  # type: ignore[type-arg]
    with open(path, "rb") as fh:
        first = json.loads(fh.readline())
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - 65536))
        last = json.loads(fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1])
    return first, last


def run(ctx: Context) -> list[Row]:
    data = ctx.many()
    paths = [str(f.path) for f in data.files]

    def baseline() -> None:
        rows = [_first_and_last(p) for p in paths]
        rows.sort(key=lambda r: r[1]["timestamp"], reverse=True)
        del rows[50:]

    def ours() -> None:
        assert len(data.service.list_sessions(limit=50).sessions) == 50

    base = median_time(baseline, ctx.params["base_repeats"], warmup=0)
    mine = median_time(ours, ctx.params["repeats"] * 5)
    catch_up = median_time(data.service.catch_up, ctx.params["repeats"])
    fresh_repeats = max(3, ctx.params["repeats"] // 2)
    bare = bare_interpreter(ctx.root, fresh_repeats)
    fresh = fresh_cli(ctx.root, data.home, data.project, ["sessions", "--limit", "50"],
                      fresh_repeats)
    return [
        speed_row(f"B3 list newest 50 of {len(paths):,} sessions", base, mine, 100, 0.010),
        Row(
            f"B3 (info) catch-up with nothing new, {len(paths):,} files",
            "—",
            fmt_time(catch_up),
            f"{base / catch_up:,.0f}×",
            "—",
            None,
        ),  # fmt: skip
        Row(f"B3 (info) `mttui sessions`, fresh process, catch-up of {len(paths):,} files "
            "included", f"python -c pass {fmt_time(bare)}", fmt_time(fresh),
            f"+{fmt_time(fresh - bare)} over the interpreter", "—", None),
    ]
