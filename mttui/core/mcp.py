"""MCP servers, their state and tools: the use case of ``mttui mcp`` and ``/mcp``.

Starts the enabled servers to list their tools (calls none), then stops them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.mcp import ServerState


def mcp_status(settings: Settings, project: Path) -> list[ServerState]:
    """Every configured server (config order): ``ok`` with its tools, ``error`` with
    why, or ``disabled`` (``enabled = false``)."""
    from mttui.graph.mcp import McpManager

    manager = McpManager(settings.mcp_servers, project)
    try:
        manager.start()
        return [manager.states[name] for name in settings.mcp_servers]
    finally:
        manager.close()
