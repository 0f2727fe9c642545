"""B1: open a session — the newest page of 50 messages of one huge session."""

from __future__ import annotations

import collections
import json

from ..context import Context
from ..timing import Row, median_time, speed_row

CASE = "B1"


def run(ctx: Context) -> list[Row]:
    data = ctx.big()
    [written] = data.files

    def baseline() -> None:
        last: collections.deque[dict] = collections.deque(maxlen=50)  # type: ignore[type-arg]
        with open(written.path, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("type") == "transcript_message":
                    last.append(rec["message"])

    def ours() -> None:
        page = data.service.history(written.session_id, limit=50)
        assert len(page.messages) == 50

    base = median_time(baseline, ctx.params["base_repeats"], warmup=0)
    mine = median_time(ours, ctx.params["repeats"] * 5)
    return [speed_row(f"B1 newest page of {written.messages:,} messages", base, mine,
                      1000, 0.005)]  # fmt: skip
