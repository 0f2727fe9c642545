"""The ``mttui`` argument parser (cli.md): commands, options and their help."""

from __future__ import annotations

import argparse

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


def build_parser() -> argparse.ArgumentParser:
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
        p = sub.add_parser(name, help=help_, description=help_)
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
    return parser


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
