"""The stdio transport of an MCP server: the ``mcp`` SDK's ``ClientSession`` over a
reader that bounds what a server can make mttui hold.

It differs from the SDK's ``stdio_client`` where a server can hurt the client:

- the server runs under ``guard.py`` in its own process group, so it dies with mttui
  (also when mttui is SIGKILLed) and its children die with it;
- stdout is read in bytes with a bounded buffer: a message longer than
  :data:`MAX_MESSAGE` is skipped as it arrives (never held whole) and its request
  answered with a JSON-RPC error, so a 100 MB result costs a few MB;
- a line that is not JSON-RPC is dropped with one warning per server (the SDK logs a
  traceback for each).

The protocol itself (requests, responses, initialisation) stays the SDK's.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

GUARD = Path(__file__).with_name("guard.py")
MAX_MESSAGE = 4 * 1024 * 1024  # bytes of one JSON-RPC message from a server
CHUNK = 64 * 1024
TOO_LARGE = -32001  # the error code of a request whose answer was dropped
_HEAD_ID = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*"2\.0"\s*,)?\s*"id"\s*:\s*(-?\d+|"[^"\\]*")')
_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')


def guarded(command: str, args: list[str]) -> list[str]:
    """The command line that runs a server under the guard (a child of this process)."""
    return [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), command, *args]


class LineReader:
    """Splits a byte stream into lines of at most :data:`MAX_MESSAGE` bytes; a longer
    line is skipped, keeping only its start and end (where a JSON-RPC id is)."""

    def __init__(self, limit: int = MAX_MESSAGE) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.skipping = False
        self.head = b""
        self.tail = b""
        self.skipped = 0

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """``("line", bytes)`` for each whole line, ``("oversize", head+tail)`` for
        each line that was too long."""
        out: list[tuple[str, bytes]] = []
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            start = len(chunk) if end < 0 else end + 1
            if self.skipping:
                self.skipped += len(piece)
                self.tail = (self.tail + piece)[-512:]
            else:
                self.buffer += piece
                if len(self.buffer) > self.limit:
                    self.skipping, self.skipped = True, len(self.buffer)
                    self.head, self.tail = bytes(self.buffer[:4096]), bytes(self.buffer[-512:])
                    self.buffer = bytearray()
            if end < 0:
                break
            if self.skipping:
                out.append(("oversize", self.head + b"\n" + self.tail))
                self.skipping, self.head, self.tail = False, b"", b""
            else:
                out.append(("line", bytes(self.buffer)))
                self.buffer = bytearray()
        return out


def oversize_id(sample: bytes) -> int | str | None:
    """The id of a skipped message from its first and last bytes (``None``: unknown)."""
    head, _, tail = sample.partition(b"\n")
    for pattern, part in ((_HEAD_ID, head), (_TAIL_ID, tail)):
        found = pattern.search(part)
        if found:
            raw = found.group(1).decode("utf-8", "replace")
            return raw.strip('"') if raw.startswith('"') else int(raw)
    return None


@contextlib.asynccontextmanager
async def stdio_session(cfg: Mapping[str, Any], env: dict[str, str], project: Path,
                        errlog: Any, warn: Callable[[str], None]) -> AsyncIterator[Any]:
    """A ``ClientSession`` on the server of ``cfg`` (stderr to ``errlog``); ``warn``
    gets the one-line warnings (garbage, an oversized message)."""
    import anyio
    from mcp import ClientSession
    from mcp.os.posix.utilities import terminate_posix_process_tree

    command = guarded(str(cfg["command"]), [str(a) for a in cfg.get("args") or []])
    process = await anyio.open_process(command, env=env, cwd=str(project), stderr=errlog,
                                       start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)
    async with anyio.create_task_group() as tg, process:
        tg.start_soon(_read, process, to_session, warn)
        tg.start_soon(_write, process, from_session)
        try:
            async with ClientSession(read_stream, write_stream) as session:
                yield session
        finally:
            with contextlib.suppress(Exception):
                if process.stdin is not None:
                    await process.stdin.aclose()
            try:
                with anyio.fail_after(2):
                    await process.wait()
            except TimeoutError:
                await terminate_posix_process_tree(process)
            except ProcessLookupError:
                pass
            tg.cancel_scope.cancel()
            for stream in (read_stream, write_stream, to_session, from_session):
                await stream.aclose()


async def _read(process: Any, out: Any, warn: Callable[[str], None]) -> None:
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError, JSONRPCMessage

    lines = LineReader()
    garbage = oversize = False
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError,
                             anyio.EndOfStream):
        async with out:
            while True:
                chunk = await process.stdout.receive(CHUNK)
                for kind, data in lines.feed(chunk):
                    if kind == "oversize":
                        if not oversize:
                            oversize = True
                            warn(f"sent a message of {lines.skipped / 2**20:.0f} MB (more "
                                 f"than {MAX_MESSAGE // 2**20} MB); dropped unread")
                        ident = oversize_id(data)
                        if ident is not None:
                            error = ErrorData(code=TOO_LARGE, message=(
                                f"the server's answer was larger than "
                                f"{MAX_MESSAGE // 1024 // 1024} MB and was dropped unread"))
                            reply = JSONRPCError(jsonrpc="2.0", id=ident, error=error)
                            await out.send(SessionMessage(JSONRPCMessage(reply)))
                        continue
                    if not data.strip():
                        continue
                    try:
                        message = JSONRPCMessage.model_validate_json(data)
                    except ValueError:
                        if not garbage:
                            garbage = True
                            text = data[:80].decode("utf-8", "replace")
                            warn(f"wrote a line that is not JSON-RPC on stdout (ignored; "
                                 f"said once): {text!r}")
                        continue
                    await out.send(SessionMessage(message))


async def _write(process: Any, source: Any) -> None:
    import anyio

    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async with source:
            async for message in source:
                data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                await process.stdin.send((data + "\n").encode())

