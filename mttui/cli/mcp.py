"""``mttui mcp [--json]``: MCP servers, their state and tools (placeholder until wired)."""

from __future__ import annotations

import argparse

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json


def cmd_mcp(args: argparse.Namespace, service: SessionService) -> int:
    settings = settings_from(args)
    servers: list[dict[str, object]] = [{"name": n, "state": "disabled", "error": None, "tools": []}
               for n in settings.mcp_servers]
    if args.json:
        emit_json({"servers": servers})
    return Exit.OK
