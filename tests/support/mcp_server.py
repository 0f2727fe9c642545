"""A small MCP server for the tests, written with the ``mcp`` SDK.

``python mcp_server.py [--http PORT] [--fail]``: stdio by default, streamable HTTP
on 127.0.0.1:PORT with ``--http``; ``--fail`` exits at once (a server that cannot
start). Every call appends a line to ``$MCP_CALLS`` (``tool journaled``): the count
survives the server's process, and ``journaled`` says whether a ``tool_dispatch``
record of the call was already in a session log under ``$MTTUI_HOME``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP


def _journaled(tool: str) -> bool:
    home = os.environ.get("MTTUI_HOME")
    if not home:
        return False
    needle = b'"tool_name":"mcp__'
    for log in Path(home).rglob("*.jsonl"):
        for line in log.read_bytes().splitlines():
            if b'"type":"tool_dispatch"' in line and needle in line and tool.encode() in line:
                return True
    return False


def _count(tool: str) -> None:
    path = os.environ.get("MCP_CALLS")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{tool} {'journaled' if _journaled(tool) else 'NOT-journaled'}\n")
            fh.flush()


def build(port: int = 0) -> FastMCP:
    server = FastMCP("testserver", host="127.0.0.1", port=port or 8000)

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        _count("add")
        return f"sum={a + b}"

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        _count("slow")
        await anyio.sleep(seconds)
        return "slept"

    @server.tool()
    def env_probe() -> str:
        """What the server sees of a configured variable."""
        _count("env_probe")
        return os.environ.get("PROBE", "unset")

    return server


def main() -> None:
    args = sys.argv[1:]
    if os.environ.get("MCP_STARTS"):
        with open(os.environ["MCP_STARTS"], "a") as fh:
            fh.write("start\n")
    if "--fail" in args:
        print("testserver: cannot start (scripted)", file=sys.stderr)
        sys.exit(3)
    if "--http" in args:
        port = int(args[args.index("--http") + 1])
        build(port).run(transport="streamable-http")
    else:
        build().run()


if __name__ == "__main__":
    main()
