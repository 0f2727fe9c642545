"""``mttui mcp [--json]``: the configured MCP servers, their state and tools (starts
them to list the tools, calls none)."""

from __future__ import annotations

import argparse

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import clip, emit_json, table, visible


def cmd_mcp(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.mcp import mcp_status
    from mttui.graph.mcp.names import shown

    settings = settings_from(args)
    states = mcp_status(settings, service.project)
    if args.json:
        emit_json({"servers": [s.as_json() for s in states]})
        return Exit.OK
    if not states:
        print("no MCP servers configured (add [mcp_servers.NAME] to config.toml)")
        return Exit.OK
    rows = []
    renamed: list[str] = []
    for s in states:
        detail = s.error or (", ".join(shown(t) for t in s.tools) if s.tools else "(no tools)")
        rows.append([s.name, s.state, s.trust, clip(detail, 80)])
        renamed += [f"  {alias} = {shown(tool)}" for tool, alias in s.aliases().items()]
    print(visible(table(["SERVER", "STATE", "TRUST", "TOOLS / ERROR"], rows)))
    if renamed:  # names the model cannot be given: it sees these instead
        print(visible("\n".join(["offered to the model as:", *renamed])))
    return Exit.OK
