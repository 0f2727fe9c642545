"""Small helpers for the CLI's human and JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in [list(headers), *map(list, rows)]:
        cells = [c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional controls
# that reorder what a terminal shows (a command being approved must read as it runs).
_HIDDEN = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)}
_HIDDEN.update({c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F),
                                           *range(0x2066, 0x206A))})


def visible(text: str) -> str:
    """``text`` with terminal control characters shown as escapes (``\\x1b``): human
    output never lets model or tool text drive the terminal. JSON output stays exact."""
    return text.translate(_HIDDEN)
