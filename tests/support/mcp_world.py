"""Helpers of the MCP tests: a config with test servers, an HTTP server process."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).with_name("mcp_server.py")


def stdio_server(name: str, *extra: str, trust: str = "ask", enabled: bool = True,
                 env: dict[str, str] | None = None) -> str:
    lines = [f"[mcp_servers.{name}]", f"command = {json.dumps(sys.executable)}",
             f"args = {json.dumps([str(SERVER), *extra])}", f'trust = "{trust}"',
             f"enabled = {'true' if enabled else 'false'}"]
    if env:
        pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
        lines.append(f"env = {{ {pairs} }}")
    return "\n".join(lines) + "\n"


def http_server_entry(name: str, url: str, trust: str = "ask") -> str:
    return f'[mcp_servers.{name}]\nurl = "{url}"\ntrust = "{trust}"\n'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_server(calls: Path, home: Path) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)],
                            env={"MCP_CALLS": str(calls), "MTTUI_HOME": str(home),
                                 "PATH": "/usr/bin:/bin"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "no HTTP server"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(10)


def call_lines(calls: Path) -> list[str]:
    return calls.read_text().splitlines() if calls.exists() else []
