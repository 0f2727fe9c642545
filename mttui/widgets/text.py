"""Plain text helpers for the UI: literal display, relative times, short forms.

Nothing here interprets markup: model and tool output is shown as it is, with
control characters (ANSI escapes included) made visible instead of acted on.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.cells import cell_len, set_cell_size

# C0 controls (except tab and newline), DEL and C1 controls become visible symbols,
# so an ANSI escape in model or tool output can never reach the terminal.
_VISIBLE = {i: chr(0x2400 + i) for i in range(32) if i not in (9, 10)}
_VISIBLE[127] = "\u2421"  # ␡
_VISIBLE.update({i: "\ufffd" for i in range(0x80, 0xA0)})


def literal(text: str) -> str:
    """``text`` with control characters replaced by visible symbols (ESC → ␛)."""
    return text.translate(_VISIBLE)


def one_line(text: str, limit: int) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` cells with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = literal(line)
    if cell_len(line) <= limit:
        return line
    return set_cell_size(line, max(limit - 1, 0)).rstrip() + "…"  # wide (CJK) chars: cells


def short_path(path: Path, limit: int = 40) -> str:
    """``~/work/proj``; a long path keeps its last two parts: ``…/work/proj``."""
    text = str(path)
    home = str(Path.home())
    if text.startswith(home + "/"):
        text = "~" + text[len(home):]
    if len(text) > limit:
        text = "…/" + "/".join(Path(text).parts[-2:])
    return literal(text)


def parse_time(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def tokens(count: int) -> str:
    """``950``, ``9.4k``, ``31k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def short_args(tool: str, args: Any, limit: int = 60) -> str:
    """A one-line summary of a tool call's arguments."""
    if isinstance(args, dict):
        for key in ("command", "path", "pattern", "query"):
            value = args.get(key)
            if isinstance(value, str) and value:
                return one_line(value, limit)
        text = json.dumps(args, ensure_ascii=False, separators=(", ", ": "))
    else:
        text = str(args)
    return one_line(text, limit)


def full_args(args: Any) -> str:
    """All arguments, readable: a shell command verbatim, otherwise indented JSON."""
    if isinstance(args, dict) and set(args) <= {"command", "timeout"} and "command" in args:
        return str(args["command"])
    try:
        return json.dumps(args, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return str(args)
