"""The names MCP tools are offered under.

MCP allows any tool name (``repo.search``, a space, an ESC, 200 characters); OpenAI
refuses a request whose tool names do not match ``^[a-zA-Z0-9_-]{1,64}$``, so one such
tool would fail every turn. A tool is offered as ``mcp__<server>__<tool>`` when that
name is valid, else under an alias that is: the name with the bad characters replaced,
cut to fit, and a hash of the server and tool names (stable across runs, whatever the
order the server lists its tools in; unique within the servers).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
LIMIT = 64
HASH = 8  # hex digits of the alias suffix (more only on a collision)


def mcp_tool_name(server: str, tool: str) -> str:
    """The real name: ``mcp__<server>__<tool>`` (may not be a valid function name)."""
    return f"{PREFIX}{server}__{tool}"


def split_tool_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of ``mcp__server__tool`` (``None`` for other names)."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX):].partition("__")
    return (server, tool) if sep and server and tool else None


def _alias(server: str, tool: str, digits: int) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode("utf-8", "surrogatepass")).hexdigest()
    suffix = "_" + digest[:digits]
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", tool).strip("_") or "tool"
    head = f"{PREFIX}{server}__"
    if len(head) + 1 + len(suffix) > LIMIT:  # a very long server name: cut it too
        head = f"{PREFIX}{server[:LIMIT - len(PREFIX) - 2 - 1 - len(suffix)]}__"
    room = LIMIT - len(head) - len(suffix)
    return head + stem[:room] + suffix


def aliases(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The offered name of each ``(server, tool)``: valid names first keep theirs, then
    the others (in sorted order, so the result does not depend on listing order) get an
    alias; a clash lengthens the hash until the alias is free."""
    pairs = sorted(set(tools))
    out: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for pair in pairs:
        name = mcp_tool_name(*pair)
        if VALID.match(name):
            out[pair] = name
            taken.add(name)
    for pair in pairs:
        if pair in out:
            continue
        digits = HASH
        alias = _alias(*pair, digits)
        while alias in taken and digits < 40:
            digits += 4
            alias = _alias(*pair, digits)
        out[pair] = alias
        taken.add(alias)
    return out


def shown(name: str) -> str:
    """``name`` for a human: characters that are not printable (ESC, newline, bidi
    controls) as ``\\x1b``-style escapes."""
    return "".join(c if c.isprintable() else (
        f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in name)
