"""An MCP ``CallToolResult`` as the text of a tool result."""

from __future__ import annotations

import json
from typing import Any

from ..tools.paths import cap_output


def result_text(result: Any) -> tuple[str, str]:
    """``(status, text)``: the text contents joined, other contents named; capped."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(str(getattr(item, "text", "")))
        elif kind == "resource":
            resource = getattr(item, "resource", None)
            parts.append(str(getattr(resource, "text", None) or f"[resource {kind}]"))
        else:
            parts.append(f"[{kind or 'content'} omitted]")
    structured = getattr(result, "structuredContent", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(parts) if parts else "(no output)"
    status = "error" if getattr(result, "isError", False) else "success"
    return status, cap_output(text)
