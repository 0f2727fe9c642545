"""The MCP servers of one runner, each held open in a background event loop.

The SDK is async; the graph runs in a worker thread. One daemon thread runs an
asyncio loop; each server lives in a task of its own that opens the session
(stdio through the ``mcp`` SDK, streamable HTTP through ``langchain-mcp-adapters``),
lists its tools with the adapters' ``load_mcp_tools`` and then waits until the
manager closes (anyio's contexts must be left by the task that entered them).

A server that fails to start or dies later gives one warning (:meth:`take_warnings`);
the agent goes on without its tools. Tools are offered under valid names
(:mod:`.names`). Calls are made from the worker thread with :meth:`call`, which
honours the stop flag (the call is cancelled after the grace period and reported
``interrupted``) and the server's ``timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..redact import without_secrets
from .names import aliases, mcp_tool_name, shown, split_tool_name
from .results import result_text

START_TIMEOUT = 30.0
CALL_TIMEOUT = 120.0  # seconds per call unless the server's ``timeout`` says otherwise
POLL = 0.05


@dataclass
class ServerState:
    """What ``mttui mcp`` and ``/mcp`` show of one server."""

    name: str
    state: str = "disabled"  # ok | error | disabled | (starting)
    error: str | None = None
    tools: list[str] = field(default_factory=list)  # bare tool names
    trust: str = "ask"
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool -> schema
    descriptions: dict[str, str] = field(default_factory=dict)
    offered: dict[str, str] = field(default_factory=dict)  # tool -> the name the model sees

    def aliases(self) -> dict[str, str]:
        """The tools offered under another name than ``mcp__<server>__<tool>``."""
        return {t: n for t, n in self.offered.items() if n != mcp_tool_name(self.name, t)}

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "error": self.error,
                "tools": list(self.tools), "aliases": self.aliases()}


class McpManager:
    """The configured servers; :meth:`start` (idempotent, blocking) starts them."""

    def __init__(self, servers: Mapping[str, Mapping[str, Any]], project: Path) -> None:
        self.config = {name: dict(cfg) for name, cfg in servers.items()}
        self.project = Path(project)
        self.states = {name: ServerState(name, trust=str(cfg.get("trust", "ask")))
                       for name, cfg in self.config.items()}
        self._warnings: list[str] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._sessions: dict[str, Any] = {}
        self._routes: dict[str, tuple[str, str]] = {}  # offered name -> (server, tool)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closing: asyncio.Event | None = None
        self._started = False
        self._closed = False
        # the stdio servers' stderr (never the TUI): appended, its last line named in errors
        self._errlogs = {name: tempfile.TemporaryFile(mode="a+b")  # noqa: SIM115 - closed by close()
                         for name in self.config}

    # -- starting ----------------------------------------------------------------
    def start(self, timeout: float = START_TIMEOUT) -> list[ServerState]:
        """Start every enabled server (once); returns the states."""
        with self._lock:
            if self._started or self._closed:
                return list(self.states.values())
            self._started = True
            enabled = [n for n, c in self.config.items() if c.get("enabled", True)]
            if not enabled:
                return list(self.states.values())
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._thread = threading.Thread(target=loop.run_forever, name="mcp", daemon=True)
            self._thread.start()
            ready = asyncio.run_coroutine_threadsafe(self._start_all(enabled, timeout), loop)
        try:
            ready.result(timeout + 5)
        except Exception as exc:  # noqa: BLE001 - a start must never take the run down
            for name in enabled:
                if self.states[name].state == "starting":
                    self._fail(name, f"did not start: {exc or type(exc).__name__}")
        return list(self.states.values())

    async def _start_all(self, names: list[str], limit: float) -> None:
        self._closing = asyncio.Event()
        ready: dict[str, asyncio.Future[None]] = {}
        for name in names:
            self.states[name].state = "starting"
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            ready[name] = fut
            self._tasks[name] = asyncio.create_task(self._serve(name, fut))
        done, pending = await asyncio.wait(list(ready.values()), timeout=limit)
        for name, fut in ready.items():
            if fut in pending:
                self._fail(name, f"did not start within {limit:g} s")
                self._tasks[name].cancel()
        running = [s for s in self.states.values() if s.state == "ok"]
        offered = aliases((s.name, t) for s in running for t in s.tools)
        for (server, tool), alias in offered.items():
            self.states[server].offered[tool] = alias
            self._routes[alias] = (server, tool)

    async def _serve(self, name: str, ready: asyncio.Future[None]) -> None:
        from langchain_mcp_adapters.tools import load_mcp_tools

        cfg = self.config[name]
        try:
            async with contextlib.AsyncExitStack() as stack:
                session = await stack.enter_async_context(self._open(cfg, name))
                await session.initialize()
                tools = await load_mcp_tools(session)
                state = self.states[name]
                for tool in tools:
                    schema = tool.args_schema if isinstance(tool.args_schema, dict) else {}
                    state.schemas[tool.name] = dict(schema) or {"type": "object",
                                                                "properties": {}}
                    state.descriptions[tool.name] = tool.description or ""
                state.tools = sorted(state.schemas)
                state.state, state.error = "ok", None
                self._sessions[name] = session
                ready.set_result(None)
                assert self._closing is not None
                await self._closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - anyio groups, OSError, protocol errors
            message = self._why(exc, name)
            if not ready.done():
                self._fail(name, f"failed to start: {message}")
                ready.set_result(None)
            elif not self._closed:
                self._fail(name, f"stopped: {message}")
        finally:
            self._sessions.pop(name, None)
            if ready.done() and self.states[name].state == "ok" and not self._closed:
                self._fail(name, "the server exited")

    def _open(self, cfg: Mapping[str, Any],
              name: str) -> contextlib.AbstractAsyncContextManager[Any]:
        if cfg.get("url"):
            from langchain_mcp_adapters.sessions import create_session

            return create_session({"transport": "streamable_http", "url": str(cfg["url"])})
        from .stdio import stdio_session

        env = without_secrets(os.environ)
        env.update({str(k): str(v) for k, v in (cfg.get("env") or {}).items()})
        return stdio_session(cfg, env, self.project, self._errlogs[name],
                             lambda text: self._warnings.append(f"MCP server {name} {text}"))

    def _why(self, exc: BaseException, name: str) -> str:
        inner = exc
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        text = str(inner).strip().splitlines()
        message = text[0] if text else type(inner).__name__
        tail = self._stderr_tail(name)
        return f"{message} ({tail})" if tail else message

    def _stderr_tail(self, name: str) -> str:
        log = self._errlogs[name]
        with contextlib.suppress(OSError, ValueError):
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - 2000))
            lines = log.read().decode("utf-8", "replace").strip().splitlines()
            return lines[-1].strip()[:200] if lines else ""
        return ""

    def _fail(self, name: str, message: str) -> None:
        state = self.states[name]
        if state.state == "error":
            return  # one warning per server
        state.state, state.error = "error", message
        self._warnings.append(f"MCP server {name} {message}; going on without its tools")

    # -- using -------------------------------------------------------------------
    def take_warnings(self) -> list[str]:
        """Warnings not shown yet (each once)."""
        out, self._warnings = self._warnings, []
        return out

    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function schemas of every tool of every running server."""
        out = []
        for state in self.states.values():
            if state.state != "ok":
                continue
            for tool in state.tools:
                alias = state.offered.get(tool) or mcp_tool_name(state.name, tool)
                about = state.descriptions.get(tool, "")[:1024] or (
                    f"{shown(tool)[:100]} (MCP server {state.name})")
                if alias != mcp_tool_name(state.name, tool):  # the model learns the real name
                    about = f"[MCP tool `{shown(tool)[:100]}` of server {state.name}] {about}"
                out.append({"type": "function", "function": {
                    "name": alias, "description": about,
                    "parameters": state.schemas[tool]}})
        return out

    def risks(self) -> dict[str, str]:
        """Risk per offered name: ``trust = "read"`` is low (never asks), ``ask`` medium."""
        return {alias: ("low" if self.states[server].trust == "read" else "medium")
                for alias, (server, _) in self._routes.items()}

    def route(self, name: str) -> tuple[str, str] | None:
        """``(server, tool)`` of an offered name (an alias or ``mcp__server__tool``)."""
        return self._routes.get(name) or split_tool_name(name)

    def real_name(self, name: str) -> str | None:
        """``mcp__<server>__<tool>`` with the tool's real name, for an offered name."""
        parts = self.route(name)
        return mcp_tool_name(*parts) if parts else None

    def call(self, name: str, args: dict[str, Any], *, stop: threading.Event | None = None,
             grace: float = 2.0) -> tuple[str, str]:
        """``(status, text)`` of one call: success | error | interrupted. Starts the
        servers first if no model call did (a call approved before a restart)."""
        self.start()
        parts = self.route(name)
        session = self._sessions.get(parts[0]) if parts else None
        if parts is None or session is None or self._loop is None:
            server = parts[0] if parts else name
            why = self.states[server].error if server in self.states else "not configured"
            return "error", f"error: MCP server {server} is not running ({why or 'not started'})"
        server, tool = parts
        limit = float(self.config[server].get("timeout") or CALL_TIMEOUT)
        future = asyncio.run_coroutine_threadsafe(session.call_tool(tool, args), self._loop)
        stop_seen: float | None = None
        task = self._tasks.get(server)
        deadline = time.monotonic() + limit
        while True:
            try:
                result = future.result(POLL)
                break
            except TimeoutError:
                pass
            except Exception as exc:  # noqa: BLE001 - the server's failure is the call's
                return "error", self._call_failed(server, exc)
            if stop is not None and stop.is_set():
                stop_seen = stop_seen or time.monotonic()
                if time.monotonic() - stop_seen >= grace:
                    future.cancel()
                    return "interrupted", "[stopped by the user; the MCP call was cancelled]"
            if task is not None and task.done():
                future.cancel()
                return "error", f"error: MCP server {server} stopped during the call"
            if time.monotonic() >= deadline:  # the server keeps running; the turn goes on
                future.cancel()
                return "error", (f"error: MCP call {shown(tool)[:100]} (server {server}) "
                                 f"timed out after {limit:g} s; it was cancelled")
        status, text = result_text(result)
        return status, text

    def _call_failed(self, server: str, exc: Exception) -> str:
        """The error text of a call that raised; a broken connection means the server
        is gone (one warning, no more calls to it)."""
        from mcp.shared.exceptions import McpError

        inner: BaseException = exc
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        why = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
        if isinstance(inner, McpError) and not _closed(inner):
            return f"error: MCP call failed: {why}"
        self._sessions.pop(server, None)
        self._fail(server, f"stopped ({why})")
        return f"error: MCP server {server} is not running (it stopped: {why})"

    def close(self) -> None:
        """Stop every server (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop = self._loop
        if loop is not None:
            async def _shutdown() -> None:
                if self._closing is not None:
                    self._closing.set()
                tasks = list(self._tasks.values())
                if tasks:
                    _, pending = await asyncio.wait(tasks, timeout=5)
                    for task in pending:
                        task.cancel()

            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_shutdown(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(5)
        for log in self._errlogs.values():
            with contextlib.suppress(OSError):
                log.close()


def _closed(error: Exception) -> bool:
    """An MCP error that says the connection closed: the server is gone (the SDK
    reports a killed server this way when its reader notices first)."""
    from mcp.types import CONNECTION_CLOSED

    data = getattr(error, "error", None)
    return getattr(data, "code", None) == CONNECTION_CLOSED
