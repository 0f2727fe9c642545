"""An MCP server (the ``mcp`` SDK) that does what a careless or hostile one may do.

``python mcp_hostile.py [--junk] [--reverse]``:

- tools named ``repo.search``, with an ESC, a newline, a space, a slash, 200
  characters and non-ASCII letters (all legal in MCP), and a plain ``add``;
- ``hang`` never answers (it blocks the whole server); ``big(size)`` answers ``size`` bytes of text;
- ``--junk`` prints lines that are not JSON-RPC on stdout before the first message
  and from a tool (``noisy``); ``--reverse`` registers the tools in reverse order.

Every call appends ``<tool> <pid>`` to ``$MCP_CALLS``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP

HOSTILE = Path(__file__)
ODD_NAMES = ["repo.search", "esc\x1b[31mred", "line\nbreak", "with space", "a/b",
             "x" * 200, "naïve_café"]


def _count(tool: str) -> None:
    path = os.environ.get("MCP_CALLS")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{tool.encode('unicode_escape').decode()} {os.getpid()}\n")


def _odd(name: str) -> Callable[[str], str]:
    def tool(query: str = "") -> str:
        _count(name)
        return f"{name} found {query}"

    return tool


def build(reverse: bool) -> FastMCP:
    server = FastMCP("hostile")

    def add(a: int, b: int) -> str:
        _count("add")
        return f"sum={a + b}"

    def hang() -> str:
        _count("hang")
        time.sleep(3600)  # blocks the whole server: it reads no more, not even stdin's end
        return "never"

    def big(size: int) -> str:
        _count("big")
        return "y" * size

    def noisy() -> str:
        _count("noisy")
        print("not json: a log line the server should have sent to stderr", flush=True)
        return "quiet now"

    entries: list[tuple[str, Any]] = [(n, _odd(n)) for n in ODD_NAMES]
    entries += [("add", add), ("hang", hang), ("big", big), ("noisy", noisy)]
    for name, fn in reversed(entries) if reverse else entries:
        server.add_tool(fn, name=name, description=f"the {name!r} tool")
    return server


def main() -> None:
    args = sys.argv[1:]
    if "--junk" in args:
        print("Starting hostile server v1.0 ...", flush=True)
        print("{not json either", flush=True)
    build("--reverse" in args).run()


if __name__ == "__main__":
    main()
