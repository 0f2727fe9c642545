"""The toolset the model sees: schemas, risk levels and one entry point to run a call."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import fs
from .paths import ToolError, cap_output
from .progress import ToolProgress
from .sandbox import Sandbox
from .shell import run_shell

RISK = {
    "read_file": "low",
    "list_dir": "low",
    "search_files": "low",
    "write_file": "medium",
    "edit_file": "medium",
    "shell": "high",
}


def _fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


_S = {"type": "string"}
_I = {"type": "integer"}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    _fn(
        "read_file",
        "Read a text file of the project. offset: first line (1-based); limit: number of lines.",
        {"path": _S, "offset": _I, "limit": _I},
        ["path"],
    ),
    _fn("list_dir", "List a directory of the project.", {"path": _S}, []),
    _fn(
        "search_files",
        "Search file contents with a regular expression; glob filters file names.",
        {"pattern": _S, "path": _S, "glob": _S},
        ["pattern"],
    ),
    _fn(
        "write_file",
        "Create or overwrite a file.",
        {"path": _S, "content": _S},
        ["path", "content"],
    ),
    _fn(
        "edit_file",
        "Replace the exact text `old` (must occur exactly once) with `new` in a file.",
        {"path": _S, "old": _S, "new": _S},
        ["path", "old", "new"],
    ),
    _fn(
        "shell",
        "Run a bash command in the project directory. timeout in seconds (default 120).",
        {"command": _S, "timeout": {"type": "number"}},
        ["command"],
    ),
]


def risk_of(tool_name: str) -> str:
    """``low``/``medium``/``high``; unknown tools are ``medium``."""
    return RISK.get(tool_name, "medium")


class ExtraTools(Protocol):
    """Tools from elsewhere (MCP servers): ``mcp__<server>__<tool>``."""

    def call(self, name: str, args: dict[str, Any], *, stop: threading.Event | None = None,
             grace: float = 2.0) -> tuple[str, str]: ...


@dataclass(frozen=True)
class ToolResult:
    status: str  # success | error | interrupted
    output: str


def _call(
    fn: Callable[..., str], project: Path, args: dict[str, Any], names: tuple[str, ...]
) -> str:
    unknown = set(args) - set(names)
    if unknown:
        raise ToolError("unknown argument(s): " + ", ".join(sorted(unknown)))
    return fn(project, **args)


def execute_tool(
    project: Path,
    tool_name: str,
    args: dict[str, Any],
    *,
    stop: threading.Event | None = None,
    grace: float = 2.0,
    progress: ToolProgress | None = None,
    call_id: str = "",
    sandbox: Sandbox | None = None,
    guarded: bool = False,
    extra: ExtraTools | None = None,
) -> ToolResult:
    """Run one call. Tool failures come back as an ``error`` result, never raised."""
    try:
        if not isinstance(args, dict):
            raise ToolError("arguments must be a JSON object")
        if tool_name.startswith("mcp__") and extra is not None:
            status, text = extra.call(tool_name, args, stop=stop, grace=grace)
            return ToolResult(status, cap_output(text))
        if tool_name == "shell":
            command = args.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ToolError("command is required")
            tick = None if progress is None else functools.partial(progress, call_id)
            res = run_shell(project, command, args.get("timeout"), stop=stop, grace=grace,
                            progress=tick, sandbox=sandbox, guarded=guarded)
            return ToolResult(res.status, res.output)
        table: dict[str, tuple[Callable[..., str], tuple[str, ...]]] = {
            "read_file": (fs.read_file, ("path", "offset", "limit")),
            "list_dir": (fs.list_dir, ("path",)),
            "search_files": (fs.search_files, ("pattern", "path", "glob")),
            "write_file": (fs.write_file, ("path", "content")),
            "edit_file": (fs.edit_file, ("path", "old", "new")),
        }
        if tool_name not in table:
            raise ToolError(f"unknown tool {tool_name!r}")
        fn, names = table[tool_name]
        return ToolResult("success", cap_output(_call(fn, project, args, names)))
    except ToolError as exc:
        return ToolResult("error", f"error: {exc}")
    except TypeError as exc:  # missing/wrong arguments from the model
        return ToolResult("error", f"error: bad arguments for {tool_name}: {exc}")
    except (OSError, ValueError, UnicodeError) as exc:
        return ToolResult("error", f"error: {tool_name} failed: {exc}")
