"""Unified diff previews of file-changing calls (shown in the approval modal)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from .fs import planned_content
from .paths import ToolError, cap_output, display


def preview_diff(project: Path, tool_name: str, arguments: dict[str, Any]) -> str | None:
    """The unified diff ``write_file``/``edit_file`` would apply; ``None`` for other tools.

    When the call cannot apply (outside the project, no unique match), the
    preview says why instead of a diff.
    """
    if tool_name not in ("write_file", "edit_file"):
        return None
    try:
        target, before, after = planned_content(project, tool_name, arguments)
    except ToolError as exc:
        return f"(no preview: {exc})"
    name = display(project, target)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}" if before or target.exists() else "/dev/null",
        tofile=f"b/{name}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return cap_output(text) if text else "(no changes)"
