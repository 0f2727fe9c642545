"""Keeping tools inside the project directory, and capping what they return."""

from __future__ import annotations

import os
from pathlib import Path

OUTPUT_CAP = 32 * 1024


class ToolError(Exception):
    """A tool failed in a way the model should read (becomes an error tool result)."""


def confine(project: Path, path: str | os.PathLike[str], *, must_exist: bool = False) -> Path:
    """``path`` resolved (symlinks followed) and checked to be inside ``project``.

    Relative paths are taken from the project directory. Raises :class:`ToolError`
    for anything that escapes it (``..``, absolute paths elsewhere, symlinks out).
    """
    root = Path(project).resolve()
    raw = str(path).strip() if path is not None else ""
    if not raw:
        raise ToolError("path is empty")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()  # follows symlinks, also of missing tails' parents
    if resolved != root and root not in resolved.parents:
        raise ToolError(f"path {raw!r} is outside the project directory; refused")
    if must_exist and not resolved.exists():
        raise ToolError(f"{display(root, resolved)}: no such file or directory")
    return resolved


def display(project: Path, path: Path) -> str:
    """A path as the model should see it: relative to the project when inside it."""
    try:
        rel = path.relative_to(Path(project).resolve())
    except ValueError:
        return str(path)
    return str(rel) or "."


def cap_output(text: str, limit: int = OUTPUT_CAP) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return text[:limit] + f"\n[output truncated: {cut} more characters not shown]"
