"""What ``mttui exec`` prints: JSON event lines (``--json``) or readable text."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from mttui.graph.events import (
    ApprovalDecided,
    ApprovalRequested,
    Compressed,
    MessageAdded,
    ModelRetry,
    Notice,
    RunEnded,
    RunStarted,
    TextDelta,
    ToolDispatched,
    ToolFinished,
)

from .output import visible

_MARK = {
    "success": "ok",
    "error": "error",
    "denied": "denied",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}


def call_label(name: str, args: Any, limit: int = 80) -> str:
    """``shell(ls -la)``: a tool call on one short line."""
    if isinstance(args, dict) and len(args) == 1:
        inner = str(next(iter(args.values())))
    elif isinstance(args, dict):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        inner = str(args)
    inner = " ".join(inner.split())
    if len(inner) > limit:
        inner = inner[: limit - 1] + "…"
    return f"{name}({inner})"


class ExecOutput:
    """One event at a time; every write is flushed at once."""

    def __init__(self, *, json_mode: bool, out: TextIO | None = None, err: TextIO | None = None):
        self.json_mode = json_mode
        self.out: Any = _PipeGuard(out or sys.stdout, self._output_closed)
        self.on_closed: Callable[[], None] | None = None
        self.closed = False
        self.err = err or sys.stderr
        self._calls: dict[str, tuple[str, Any]] = {}
        self._streamed: set[str] = set()
        self._open_line = False

    def _output_closed(self) -> None:
        """The reader went away (``| head``): stop the run cleanly, print nothing more."""
        if not self.closed:
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()

    # -- low level --------------------------------------------------------------
    def event(self, name: str, **fields: Any) -> None:
        if self.json_mode:
            self.out.write(json.dumps({"event": name, **fields}, ensure_ascii=False) + "\n")
            self.out.flush()

    def _line(self, text: str, *, err: bool = False) -> None:
        self._end_text()
        stream = self.err if err else self.out
        stream.write(visible(text) + "\n")
        stream.flush()

    def _end_text(self) -> None:
        if self._open_line:
            self.out.write("\n")
            self.out.flush()
            self._open_line = False

    def note(self, text: str) -> None:
        self._line(text, err=True)

    def error(self, text: str) -> None:
        self._line(f"mttui: {text.splitlines()[0] if text else 'failed'}", err=True)

    # -- run events --------------------------------------------------------------
    def show(self, ev: Any) -> None:
        if self.json_mode:
            self._json(ev)
        else:
            self._human(ev)

    def _json(self, ev: Any) -> None:
        if isinstance(ev, RunStarted):
            self.event("run_start", run_id=ev.run_id)
        elif isinstance(ev, MessageAdded):
            self.event("message", message=ev.message)
        elif isinstance(ev, ApprovalRequested):
            self.event(
                "approval_request",
                request_id=ev.request_id,
                run_id=ev.run_id,
                tool_calls=ev.tool_calls,
                asked_again=ev.asked_again,
            )
        elif isinstance(ev, ApprovalDecided):
            self.event("approval_decision", request_id=ev.request_id, decisions=ev.decisions)
        elif isinstance(ev, ToolDispatched):
            self.event("tool_dispatch", call_id=ev.call_id, tool_name=ev.tool_name)
        elif isinstance(ev, ToolFinished):
            self.event("tool_outcome", call_id=ev.call_id, status=ev.status)
        elif isinstance(ev, Compressed):
            self.event(
                "compression",
                removed_count=ev.removed_count,
                kept_count=ev.kept_count,
                tokens_before=ev.tokens_before,
                tokens_after=ev.tokens_after,
            )
        elif isinstance(ev, RunEnded):
            fields = {"error": ev.error} if ev.error else {}
            self.event("run_end", run_id=ev.run_id, status=ev.status, **fields)
        elif isinstance(ev, Notice):
            if ev.level == "warning":  # MCP servers failing, the sandbox off (essentials.md)
                self.event("warning", message=ev.text)
            self.err.write(f"mttui: {ev.text}\n")
            self.err.flush()

    def _human(self, ev: Any) -> None:
        if isinstance(ev, TextDelta):
            self._streamed.add(ev.message_id)
            self.out.write(visible(ev.text))
            self.out.flush()
            self._open_line = not ev.text.endswith("\n")
        elif isinstance(ev, MessageAdded):
            msg = ev.message
            if msg.get("role") != "assistant":
                return
            for call in msg.get("tool_calls") or []:
                self._calls[call["id"]] = (call["name"], call.get("args"))
            if msg.get("status") == "error":
                return  # reported once, by the run's end
            if msg.get("id") not in self._streamed and msg.get("content"):
                self._line(str(msg["content"]))
            self._end_text()
        elif isinstance(ev, ToolDispatched):
            self._calls[ev.call_id] = (ev.tool_name, ev.arguments)
        elif isinstance(ev, ToolFinished):
            name, args = self._calls.get(ev.call_id, (ev.tool_name, {}))
            self._line(f"• {call_label(name, args)} → {_MARK.get(ev.status, ev.status)}")
        elif isinstance(ev, ApprovalRequested):
            again = " (asked again)" if ev.asked_again else ""
            for call in ev.tool_calls:
                self._calls[call["call_id"]] = (call["tool_name"], call["arguments"])
                label = call_label(call["tool_name"], call["arguments"])
                self._line(f"? approval needed{again}: {label} [{call['risk_level']}]", err=True)
        elif isinstance(ev, ApprovalDecided):
            for cid, verdict in ev.decisions.items():
                name, args = self._calls.get(cid, (cid, {}))
                self._line(f"  {verdict}: {call_label(name, args)}", err=True)
        elif isinstance(ev, Compressed):
            self._line(
                f"(history compressed: {ev.tokens_before} → {ev.tokens_after} tokens)", err=True
            )
        elif isinstance(ev, (Notice, ModelRetry)):  # ModelRetry: "retrying 1/2 after …"
            self._line(f"mttui: {ev.text}", err=True)
        elif isinstance(ev, RunEnded):
            self._end_text()
            if ev.status == "stopped":
                self._line("(stopped)", err=True)


class _PipeGuard:
    """A text stream whose writes stop (and report once) when the pipe is closed."""

    def __init__(self, stream: TextIO, on_closed: Callable[[], None]) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self._closed = False

    def _broken(self) -> None:
        self._closed = True
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
        self._on_closed()

    def write(self, text: str) -> None:
        if self._closed:
            return
        try:
            self._stream.write(text)
        except BrokenPipeError:
            self._broken()

    def flush(self) -> None:
        if self._closed:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._broken()
