"""The MCP manager on its own: a stop cancels a running call (``interrupted``); a
server that dies later is one warning and its calls fail cleanly; the output is
capped; closing twice is harmless."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

from mttui.graph.mcp import McpManager
from mttui.graph.tools.paths import OUTPUT_CAP
from tests.support.mcp_world import SERVER


def _manager(project: Path) -> McpManager:
    cfg = {"command": sys.executable, "args": [str(SERVER)], "trust": "ask", "enabled": True}
    manager = McpManager({"calc": cfg}, project)
    states = manager.start()
    assert states[0].state == "ok", states[0].error
    return manager


def test_stop_cancels_a_running_call(project: Path) -> None:
    manager = _manager(project)
    try:
        stop = threading.Event()
        threading.Timer(0.5, stop.set).start()
        status, text = manager.call("mcp__calc__slow", {"seconds": 60}, stop=stop, grace=0.2)
        assert status == "interrupted" and "cancelled" in text
        assert manager.call("mcp__calc__add", {"a": 1, "b": 2}) == ("success", "sum=3")
    finally:
        manager.close()
        manager.close()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


def test_a_server_that_dies_is_one_warning(project: Path) -> None:
    manager = _manager(project)
    try:
        assert manager.take_warnings() == []
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        killed: list[int] = []
        for pid in pids:  # the server: mcp_server.py, a child of the guard this process ran
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                parent = _parent(pid)
            except OSError:
                continue
            if (str(SERVER).encode() in cmd and b"guard.py" not in cmd
                    and _parent(parent) == os.getpid()):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        assert killed
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_running(p) for p in killed):
            time.sleep(0.05)
        status, text = manager.call("mcp__calc__add", {"a": 1, "b": 2})
        # the manager learns of the death from the closed pipe on its own loop: before
        # that, the call finds it out itself (either way an error, never a result)
        assert status == "error" and ("not running" in text or "stopped during" in text)
        warnings = manager.take_warnings()
        assert len(warnings) == 1 and "calc" in warnings[0]
        assert manager.take_warnings() == []
    finally:
        manager.close()


def test_unknown_server_and_capped_output(project: Path) -> None:
    manager = McpManager({}, project)
    assert manager.start() == []
    status, text = manager.call("mcp__nope__x", {})
    assert status == "error" and "nope" in text
    from mcp.types import CallToolResult, TextContent

    from mttui.graph.mcp.results import result_text

    big = CallToolResult(content=[TextContent(type="text", text="x" * (OUTPUT_CAP * 2))])
    status, text = result_text(big)
    assert status == "success" and len(text) < OUTPUT_CAP + 200
