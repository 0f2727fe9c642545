"""The ``mttui`` argument parser (cli.md): commands, options and their help."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import cast

from mttui import __version__

SETTINGS_HELP = """\
settings (flag > environment > config.toml > default):
  provider               --provider, MTTUI_PROVIDER       openai | offline (default: openai when
                                                          OPENAI_API_KEY or OPENAI_BASE_URL is set)
  model                  --model, MTTUI_MODEL
  base_url               --base-url, OPENAI_BASE_URL
  api_key                OPENAI_API_KEY (never stored by mttui)
  approval               --approval, MTTUI_APPROVAL       ask | auto-edit | yolo | deny (ask)
  token_limit            MTTUI_TOKEN_LIMIT                128000
  compression_threshold  MTTUI_COMPRESSION_THRESHOLD      0.5
  auto_compress          MTTUI_AUTO_COMPRESS              true
  max_steps_per_run      MTTUI_MAX_STEPS                  50
  max_retries            MTTUI_MAX_RETRIES                2
  timeout                MTTUI_TIMEOUT                    120 (seconds per model request)
  sandbox                --sandbox, MTTUI_SANDBOX         off | workspace (workspace if bwrap works)
  sandbox_network        config.toml only                 false (network inside the sandbox)
  [permissions]          config.toml: allow = [...], deny = [...]   rules: TOOL or TOOL(glob)
  [mcp_servers.NAME]     config.toml: command/args/env or url, trust = ask|read, enabled
data: MTTUI_HOME (default: the platform's user data dir); MTTUI_DEBUG=1 shows tracebacks.
exit codes: 0 done, 1 failed, 2 usage, 3 needs approval, 4 session locked, 5 not found.
"""


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options accepted before and after the command (``mttui --project D sessions``)."""
    d = argparse.SUPPRESS if suppress else None
    parser.add_argument("--project", metavar="DIR", default=d, help="project directory (cwd)")
    parser.add_argument("--provider", default=d, help="openai | offline")
    parser.add_argument("--model", default=d)
    parser.add_argument("--base-url", dest="base_url", default=d)
    parser.add_argument(
        "--approval", default=d, choices=["ask", "auto-edit", "yolo", "deny"], help="approval mode"
    )
    parser.add_argument("--sandbox", default=d, choices=["off", "workspace"],
                        help="run shell commands under bubblewrap (workspace when bwrap works)")


class _Skipped:
    """The options of a command that will not run (``build_parser(only=...)``): every
    call is taken and ignored, so no time is spent describing them."""

    def __getattr__(self, name: str) -> Callable[..., _Skipped]:
        return lambda *args, **kwargs: self


def command_of(argv: Sequence[str]) -> str | None:
    """What ``build_parser(only=...)`` needs for ``argv``: its first word, the command
    argparse will take; ``""`` for no arguments at all (no command's options are
    needed); ``None`` when it starts with an option (every command is described)."""
    if not argv:
        return ""
    return None if argv[0].startswith("-") else argv[0]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """``only``: describe only that command's options (the others are still named, for
    the help and the errors); ``""``: no command's (``mttui`` with no arguments)."""
    parser = argparse.ArgumentParser(
        prog="mttui",
        description="A terminal agent whose sessions survive anything.",
        epilog=SETTINGS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mttui {__version__}")
    _common(parser, suppress=False)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-c", "--continue", dest="continue_", action="store_true",
                       help="open the most recent session of the project")
    group.add_argument("-r", "--resume", nargs="?", const="", default=None, metavar="SESSION",
                       help="open SESSION (without one: the session browser)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def cmd(name: str, help_: str) -> argparse.ArgumentParser:
        if only == "":  # no arguments: no command is named, none needs describing
            return cast(argparse.ArgumentParser, _Skipped())
        p = sub.add_parser(name, help=help_, description=help_)
        if only is not None and name != only:
            return cast(argparse.ArgumentParser, _Skipped())
        _common(p, suppress=True)
        return p

    p = cmd("demo", "fill a separate demo home with sample sessions and open the TUI")
    p.add_argument("--reset", action="store_true",
                   help="start the demo over (its sessions and sample project as new)")

    p = cmd("exec", "run one user turn headlessly")
    p.add_argument("prompt", nargs="?", default=None)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--session", metavar="S")
    g.add_argument("--resume", metavar="S")
    g.add_argument("--continue", dest="continue_", action="store_true")
    p.add_argument("--approve", choices=["ask", "all", "none"], default="ask")
    p.add_argument("--json", action="store_true")

    p = cmd("sessions", "list sessions, newest first")
    p.add_argument("--all-projects", action="store_true")
    p.add_argument("--limit", type=_positive, default=50)
    p.add_argument("--cursor")
    p.add_argument("--json", action="store_true")

    p = cmd("history", "show a page of a session's messages")
    p.add_argument("session", metavar="S")
    p.add_argument("--limit", type=_positive, default=50)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--before", type=int, metavar="SEQ")
    g.add_argument("--around", type=int, metavar="SEQ")
    p.add_argument("--json", action="store_true")

    p = cmd("search", "search messages (plain text, any string)")
    p.add_argument("query", nargs="?", default=None)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--session", metavar="S")
    g.add_argument("--all-projects", action="store_true")
    p.add_argument("--limit", type=_positive, default=50)
    p.add_argument("--json", action="store_true")

    p = cmd("resume-check", "plan a resume without changing anything")
    p.add_argument("session", metavar="S")
    p.add_argument("--json", action="store_true")

    _queue_parser(cmd("queue", "list and edit a session's queued inputs"))

    p = cmd("compact", "compress a session's history for the model")
    p.add_argument("session", metavar="S")
    p.add_argument("--instructions")
    p.add_argument("--json", action="store_true")

    p = cmd("rename", "set a session's title")
    p.add_argument("session", metavar="S")
    p.add_argument("title")

    p = cmd("delete", "delete a session and its checkpoints")
    p.add_argument("session", metavar="S")
    p.add_argument("--yes", action="store_true", help="do not ask")

    p = cmd("export", "export a session as Markdown or JSONL")
    p.add_argument("session", metavar="S")
    p.add_argument("--format", choices=["markdown", "jsonl"], default="markdown")
    p.add_argument("-o", "--output", metavar="FILE")

    p = cmd("reindex", "rebuild the index from the session logs")
    p.add_argument("--json", action="store_true")

    p = cmd("doctor", "check every session log against the index")
    p.add_argument("--repair", action="store_true")
    p.add_argument("--json", action="store_true")
    _time_travel(cmd)
    _essentials_parser(cmd)
    return parser


def _time_travel(cmd: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """checkpoints, rewind, fork, ledger (timetravel.md)."""
    p = cmd("checkpoints", "list a session's file snapshots")
    p.add_argument("session", metavar="S")
    p.add_argument("--json", action="store_true")

    p = cmd("rewind", "go back to just before a user message (conversation and/or files)")
    p.add_argument("session", metavar="S")
    p.add_argument("--to", type=int, metavar="SEQ")
    p.add_argument("--undo", action="store_true", help="undo the last rewind")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--conversation", dest="mode", action="store_const", const="conversation")
    g.add_argument("--code", dest="mode", action="store_const", const="code")
    g.add_argument("--both", dest="mode", action="store_const", const="both")
    p.set_defaults(mode="both")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.add_argument("--json", action="store_true")

    p = cmd("fork", "start a new session from a session's conversation up to a point")
    p.add_argument("session", metavar="S")
    p.add_argument("--at", type=int, metavar="SEQ")
    p.add_argument("--title")
    p.add_argument("--finish", action="store_true",
                   help="S is an incomplete fork: make it again from its source, remove it")
    p.add_argument("--json", action="store_true")

    p = cmd("ledger", "list and settle interrupted tool calls")
    p.add_argument("session", metavar="S")
    p.add_argument("call_id", nargs="?", metavar="CALL_ID")
    p.add_argument("action", nargs="?", choices=["mark-done", "mark-failed", "rerun"])
    p.add_argument("--note")
    p.add_argument("--approve", choices=["ask", "all", "none"], default="ask")
    p.add_argument("--json", action="store_true")


def _essentials_parser(cmd: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """``permissions`` and ``mcp`` (essentials.md)."""
    p = cmd("permissions", "list permission rules and session grants; revoke one")
    p.add_argument("--json", action="store_true")
    ps = p.add_subparsers(dest="permissions_command", metavar="ACTION")
    r = ps.add_parser("revoke", help="remove a saved project rule (or, with --session, "
                      "a session grant)")
    _common(r, suppress=True)
    r.add_argument("rule", metavar="RULE")
    r.add_argument("--session", metavar="S", help="revoke the grant of tool RULE in S")
    p = cmd("mcp", "list MCP servers, their state and tools (starts them, calls none)")
    p.add_argument("--json", action="store_true")


def _queue_parser(p: argparse.ArgumentParser) -> None:
    qs = p.add_subparsers(dest="queue_command", metavar="ACTION", required=True)

    def action(name: str) -> argparse.ArgumentParser:  # common options after the action too
        q = qs.add_parser(name, help=QUEUE_ACTIONS[name], description=QUEUE_ACTIONS[name])
        _common(q, suppress=True)
        q.add_argument("session", metavar="S")
        return q

    action("list").add_argument("--json", action="store_true")
    action("add").add_argument("text")
    q = action("edit")
    q.add_argument("id")
    q.add_argument("text")
    q = action("move")
    q.add_argument("id")
    q.add_argument("position", type=int)
    action("remove").add_argument("id")
    q = action("resume")
    q.add_argument("--approve", choices=["ask", "all", "none"], default="ask")
    q.add_argument("--json", action="store_true")


QUEUE_ACTIONS = {
    "list": "the queued and steered inputs of session S (positions as N)",
    "add": "queue TEXT to run after the current run",
    "edit": "replace the text of item N (its id or position)",
    "move": "move item N (its id or position) to POSITION",
    "remove": "remove item N (its id or position)",
    "resume": "resume a held queue and run what it holds",
}


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def literal_double_dash(args: argparse.Namespace) -> None:
    """A text positional given as a literal ``--`` after ``--`` (``rename S -- --``).

    argparse drops every ``--`` from a positional's value and leaves an empty list;
    the user meant the text ``--`` itself.
    """
    for name, value in vars(args).items():
        if isinstance(value, list) and not value:
            setattr(args, name, "--")
