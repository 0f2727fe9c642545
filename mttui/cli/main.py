"""Entry point: parse, build the session service, dispatch to one command module."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mttui.session import gc_pause

from .errors import Exit, report_error
from .parser import build_parser, command_of, literal_double_dash

if TYPE_CHECKING:
    from mttui.session.service import SessionService

Handler = Callable[[argparse.Namespace, "SessionService"], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mttui`` script (``argv``: called from Python, e.g. a test)."""
    if argv is None:  # a process start: no collections until the command runs (gc_pause)
        gc_pause.pause()
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    finally:
        gc_pause.resume()


def _main(words: list[str]) -> int:
    parser = build_parser(only=command_of(words))  # only the command's own options
    args, extra = parser.parse_known_args(words)
    literal_double_dash(args)
    if args.command == "search" and args.query is None and len(extra) == 1:
        # A query that looks like an option (``-x``) is still just text to search.
        args.query, extra = extra[0], []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "search" and args.query is None:
        parser.error("search needs a QUERY")
    bad = undecodable(args)
    if bad is not None:
        print(f"mttui: an argument is not valid UTF-8: {bad!r}", file=sys.stderr)
        return Exit.USAGE
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return Exit.SIGINT
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error worth a message.
        sys.stderr.close()
        return Exit.OK
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
        return report_error(exc)


def undecodable(args: argparse.Namespace) -> str | None:
    """The first argument that was not valid UTF-8 (Python keeps its bytes as lone
    surrogates, which no log, index or model request could store), or ``None``."""
    for value in vars(args).values():
        if isinstance(value, str) and any("\ud800" <= c <= "\udfff" for c in value):
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return None


def _handler(command: str | None) -> Handler:
    """The command's function; its module is imported only now (start-up cost)."""
    if command is None:
        from .tui import run_tui

        return run_tui
    if command == "exec":
        from .exec import run_exec

        return run_exec
    if command == "compact":
        from .compact import cmd_compact

        return cmd_compact
    if command == "queue":
        from .queue import cmd_queue

        return cmd_queue
    if command in ("checkpoints", "rewind", "fork", "ledger"):
        from .time_travel import handler

        return handler(command)
    if command == "permissions":
        from .permissions import cmd_permissions

        return cmd_permissions
    if command == "mcp":
        from .mcp import cmd_mcp

        return cmd_mcp
    from . import read

    handlers: dict[str, Handler] = {
        "sessions": read.cmd_sessions,
        "history": read.cmd_history,
        "search": read.cmd_search,
        "resume-check": read.cmd_resume_check,
        "rename": read.cmd_rename,
        "delete": read.cmd_delete,
        "export": read.cmd_export,
        "reindex": read.cmd_reindex,
        "doctor": read.cmd_doctor,
    }
    return handlers[command]


def _dispatch(args: argparse.Namespace) -> int:
    from mttui.session.paths import data_home
    from mttui.session.service import SessionService

    project = Path(args.project or os.getcwd())
    if not project.is_dir():
        what = "not a directory" if project.exists() else "project directory not found"
        from .output import visible

        print(f"mttui: {what}: {visible(str(project))}", file=sys.stderr)
        return Exit.USAGE
    if args.command == "demo":
        gc_pause.resume()
        from .tui import run_demo

        return run_demo(args)
    handler = _handler(args.command)
    service = SessionService(data_home(), project)
    if args.command is not None:  # the TUI resumes collections after its first frame
        gc_pause.resume()
    return int(handler(args, service))
