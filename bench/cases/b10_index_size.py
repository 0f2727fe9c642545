"""B10: size of the index against the raw message text it indexes."""

from __future__ import annotations

from pathlib import Path

from ..context import Context
from ..timing import Row

CASE = "B10"


def _size(path: Path) -> int:
    return sum(
        p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()
    )


def run(ctx: Context) -> list[Row]:
    data = ctx.corpus()
    data.service.close()  # let SQLite fold the WAL back before measuring
    size = _size(data.service.layout.index_path)
    raw = data.text_bytes
    ratio = size / raw
    return [Row(f"B10 index size, {data.messages:,} messages", f"{raw / 1e6:,.1f} MB text",
                f"{size / 1e6:,.1f} MB", f"{ratio:.2f}×", "≤ 3.5×", ratio <= 3.5)]  # fmt: skip
