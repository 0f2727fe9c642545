"""Slash commands: one registry, one use-case call per command, for every face.

The TUI prompt and ``mttui exec --session S "/…"`` both call :func:`parse` and
:func:`run_command`; the face only shows the outcome (``text``), drives its
``events`` (``/compact``) and acts on its ``action`` (``exit``, ``help``, …).
A command is one entry of the :data:`COMMANDS` table.

    parsed = parse(text, provider)       # None: a prompt for the model
    outcome = run_command(parsed, ctx)   # SlashError: one line for the user
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from mttui.graph.events import RunEvent
from mttui.session.errors import MttuiError
from mttui.session.service import SessionService

from .handle import SessionHandle

if TYPE_CHECKING:
    from mttui.config import Settings

# the offline model's own triggers reach it as prompts (runtime.md)
OFFLINE_TRIGGERS = frozenset({"read", "ls", "grep", "write", "edit"})
_WORD = re.compile(r"^/([A-Za-z][A-Za-z0-9_-]*)(?:\s+(.*))?$", re.DOTALL)


class SlashError(MttuiError):
    """A command that cannot run (one line); nothing was sent to the model."""


class UnknownCommand(SlashError):
    """``/word`` is no command (exit code 2 in ``exec``)."""


@dataclass(frozen=True)
class Parsed:
    name: str
    args: str


@dataclass
class SlashContext:
    """What a command may use: the session (opened for writing only when needed)."""

    service: SessionService
    settings: Settings
    session_id: str | None
    open_handle: Callable[[], SessionHandle | None]  # the write lock; None: cannot write

    def handle(self) -> SessionHandle:
        """The session open for writing, its resume applied (``SlashError`` otherwise)."""
        if self.session_id is None:
            raise SlashError("no session yet: send a message first")
        handle = self.open_handle()
        if handle is None:
            raise SlashError("the session is open for writing in another process")
        handle.resume()
        return handle

    def need_session(self) -> str:
        if self.session_id is None:
            raise SlashError("no session yet: send a message first")
        return self.session_id


@dataclass(frozen=True)
class SlashOutcome:
    """What a command did: ``text`` to show, ``action`` for the face, ``events`` to drive."""

    command: str
    text: str = ""
    action: str | None = None  # exit | help | resume | cleared | model | compact | …
    events: Iterator[RunEvent] | None = None
    data: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # the arguments, e.g. "[NAME]"
    summary: str
    run: Callable[[SlashContext, str], SlashOutcome]


def parse(text: str, provider: str = "") -> Parsed | None:
    """The command in ``text``, or ``None`` when it is a prompt for the model (no
    leading ``/word``, or an offline trigger while the offline model is in use)."""
    m = _WORD.match(text.strip())
    if m is None:
        return None
    name = m.group(1).lower()
    if provider == "offline" and name in OFFLINE_TRIGGERS and name not in REGISTRY:
        return None
    return Parsed(name, (m.group(2) or "").strip())


def check(parsed: Parsed) -> Command:
    """The command of ``parsed``; :class:`UnknownCommand` when there is none."""
    command = REGISTRY.get(parsed.name)
    if command is None:
        raise UnknownCommand(f"unknown command /{parsed.name} (try /help)")
    return command


def run_command(parsed: Parsed, ctx: SlashContext) -> SlashOutcome:
    return check(parsed).run(ctx, parsed.args)


def completions(prefix: str) -> list[Command]:
    """Commands whose name starts with ``prefix`` (without the slash), in /help order."""
    p = prefix.lstrip("/").lower()
    return [c for c in REGISTRY.values() if c.name.startswith(p)]


def help_text() -> str:
    width = max(len(f"/{c.name} {c.usage}".strip()) for c in REGISTRY.values())
    lines = [f"{f'/{c.name} {c.usage}'.strip():<{width}}  {c.summary}"
             for c in REGISTRY.values()]
    lines.append("(keys: F1 in the app lists every key binding; @path attaches a file)")
    return "\n".join(lines)


# -- the commands -----------------------------------------------------------------------
def _help(ctx: SlashContext, args: str) -> SlashOutcome:
    return SlashOutcome("help", help_text(), action="help")


def _clear(ctx: SlashContext, args: str) -> SlashOutcome:
    from .clear import clear_session

    handle = ctx.handle()
    done = clear_session(handle.runner, handle.pending)
    dropped = f" ({done.dropped} pending input(s) dropped)" if done.dropped else ""
    return SlashOutcome("clear", f"cleared: the conversation starts over{dropped}",
                        action="cleared", data={"thread_id": done.thread_id,
                                                "dropped": done.dropped})  # fmt: skip


def _compact(ctx: SlashContext, args: str) -> SlashOutcome:
    from .compact import compact_events

    events = compact_events(ctx.handle(), args or None)
    return SlashOutcome("compact", action="compact", events=events)


def _model(ctx: SlashContext, args: str) -> SlashOutcome:
    if not args:
        settings = ctx.settings
        if ctx.session_id is not None:
            info = ctx.service.get(ctx.session_id)
            chosen = f" (chosen with /model: {info.chosen_model})" if info.chosen_model else ""
            return SlashOutcome("model", f"model: {info.model or settings.model} "
                                         f"({info.provider or settings.provider}){chosen}",
                                data={"model": info.model})  # fmt: skip
        return SlashOutcome("model", f"model: {settings.model} ({settings.provider})",
                            data={"model": settings.model})  # fmt: skip
    model = ctx.handle().set_model(args)
    return SlashOutcome("model", f"model: {model} from the next run on", action="model",
                        data={"model": model})  # fmt: skip


def _permissions(ctx: SlashContext, args: str) -> SlashOutcome:
    words = args.split()
    if words[:1] == ["revoke"] and len(words) == 2:
        if not ctx.handle().revoke_grant(words[1]):
            raise SlashError(f"{words[1]} is not granted for this session")
        return SlashOutcome("permissions", f"revoked: {words[1]} asks again")
    if args:
        raise SlashError("usage: /permissions [revoke TOOL]")
    sid = ctx.need_session()
    handle = ctx.open_handle()
    grants = handle.grants() if handle is not None else _logged_grants(ctx, sid)
    text = ("session grants: " + ", ".join(grants) + "  (revoke with /permissions revoke TOOL)"
            if grants else "session grants: none")  # fmt: skip
    return SlashOutcome("permissions", text, action="permissions", data={"grants": grants})


def _logged_grants(ctx: SlashContext, sid: str) -> list[str]:
    return ctx.service.grants(sid).get(sid, [])


def _usage(ctx: SlashContext, args: str) -> SlashOutcome:
    from .usage import usage_view

    view = usage_view(ctx.service, ctx.need_session(), ctx.settings.token_limit)
    return SlashOutcome("usage", view.describe(), data={"usage": view.usage.as_json(),
                                                        "context_left": view.context_left_pct})


def _export(ctx: SlashContext, args: str) -> SlashOutcome:
    sid = ctx.need_session()
    target = Path(args).expanduser() if args else Path(f"mttui-{sid[:12]}.md")
    if not target.is_absolute():
        target = ctx.service.project / target
    if target.exists():
        raise SlashError(f"{target} exists: give /export another file name")
    try:
        import os

        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "w", encoding="utf-8") as fh:
            for chunk in ctx.service.export(sid, "markdown"):
                fh.write(chunk)
    except OSError as exc:
        raise SlashError(f"cannot write {target}: {exc.strerror or exc}") from None
    return SlashOutcome("export", f"exported to {target}", action="export",
                        data={"path": str(target)})


def _resume(ctx: SlashContext, args: str) -> SlashOutcome:
    """The app opens its session picker instead; elsewhere: how to get there."""
    if args:
        raise SlashError("/resume takes no argument: pick the session in the list "
                         "(or run mttui --resume ID)")
    return SlashOutcome("resume", "pick a session in the app (mttui --resume [ID])",
                        action="resume")


def _exit(ctx: SlashContext, args: str) -> SlashOutcome:
    return SlashOutcome("exit", action="exit")


def _mcp(ctx: SlashContext, args: str) -> SlashOutcome:
    """The MCP servers with their state and tools (starts them; calls none). The TUI
    shows its dialog instead, which loads in a worker."""
    from .mcp import mcp_status

    states = mcp_status(ctx.settings, ctx.service.project)
    if not states:
        return SlashOutcome("mcp", "no MCP servers configured ([mcp_servers.NAME] in "
                            "config.toml)", action="mcp")
    from mttui.graph.mcp.names import shown

    lines = [f"{s.name}: {s.state}" + (f" ({s.error})" if s.error else "")
             + (f" — {', '.join(shown(t) for t in s.tools)}" if s.tools else "")
             + "".join(f"\n  {alias} = {shown(t)}" for t, alias in s.aliases().items())
             for s in states]
    return SlashOutcome("mcp", "\n".join(lines), action="mcp",
                        data={"servers": [s.as_json() for s in states]})


def _rewind(ctx: SlashContext, args: str) -> SlashOutcome:
    """``/rewind SEQ`` (conversation and files) or ``/rewind undo``; the chat opens its
    picker for a bare ``/rewind`` instead."""
    from .rewind import rewind_held

    if args != "undo" and not args.isdigit():
        raise SlashError("/rewind SEQ (a user message's seq, see `mttui history`) or "
                         "/rewind undo; in the chat a bare /rewind opens a picker")
    handle = ctx.handle()  # this process holds the session (exec --session S)
    if args == "undo":
        done = rewind_held(handle, ctx.service, ctx.settings, None)
        return SlashOutcome("rewind", "the last rewind was undone", action="rewind",
                            data={"files_restored": len(done.files_restored)})
    done = rewind_held(handle, ctx.service, ctx.settings, int(args))
    return SlashOutcome("rewind", f"rewound to just before message {args}", action="rewind",
                        data={"files_restored": len(done.files_restored),
                              "files_deleted": len(done.files_deleted)})  # fmt: skip


def _fork(ctx: SlashContext, args: str) -> SlashOutcome:
    """``/fork [SEQ]``: a new session with this one's conversation up to SEQ (default:
    the end)."""
    from .fork import fork

    if args and not args.isdigit():
        raise SlashError("/fork [SEQ]: SEQ is a message's seq (see `mttui history`)")
    done = fork(ctx.service, ctx.settings, ctx.need_session(), at=int(args) if args else None)
    return SlashOutcome("fork", f"forked into session {done.session_id} ({done.messages} "
                        "messages)", action="fork", data={"session_id": done.session_id})


# The commands, in /help order: a fixed table (nothing is registered at import time).
COMMANDS: tuple[Command, ...] = (
    Command("help", "", "list commands and keys", _help),
    Command("clear", "", "start over in this session (a new conversation)", _clear),
    Command("compact", "[instructions]", "compress the history the model sees", _compact),
    Command("model", "[NAME]", "show or switch this session's model", _model),
    Command("permissions", "[revoke TOOL]", "session grants; revoke one", _permissions),
    Command("mcp", "", "MCP servers: state and tools", _mcp),
    Command("rewind", "[SEQ | undo]", "go back to before a message (conversation, files)",
            _rewind),
    Command("fork", "[SEQ]", "a new session from this conversation up to a point", _fork),
    Command("usage", "", "this session's tokens, cost and context left", _usage),
    Command("export", "[FILE]", "export the session as Markdown", _export),
    Command("resume", "", "open another session (the session list, as ctrl+o)", _resume),
    Command("exit", "", "leave the app", _exit),
)
REGISTRY: Mapping[str, Command] = MappingProxyType({c.name: c for c in COMMANDS})
