"""MCP servers (``[mcp_servers.NAME]``): started lazily, their tools offered to the
model as ``mcp__<server>__<tool>`` (or a valid alias of it) and called through the same
journal, policy and approvals as the built-in tools. Imported only when a run starts (or
by ``mttui mcp``)."""

from .manager import McpManager, ServerState
from .names import mcp_tool_name, shown, split_tool_name

__all__ = ["McpManager", "ServerState", "mcp_tool_name", "shown", "split_tool_name"]
