"""The project toolset: file tools, shell, confinement, risk and approval policy."""

from .diff import preview_diff
from .paths import OUTPUT_CAP, ToolError, cap_output, confine
from .policy import decide
from .registry import RISK, TOOL_SCHEMAS, ToolResult, execute_tool, risk_of

__all__ = [
    "OUTPUT_CAP",
    "RISK",
    "TOOL_SCHEMAS",
    "ToolError",
    "ToolResult",
    "cap_output",
    "confine",
    "decide",
    "execute_tool",
    "preview_diff",
    "risk_of",
]
