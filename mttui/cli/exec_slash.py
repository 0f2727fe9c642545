"""``mttui exec --session S "/…"``: slash commands handled locally, never sent to the model.

The same registry as the TUI prompt (``mttui.core.slash``). An unknown ``/word`` is a
usage error (exit 2) before anything is opened or written.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mttui.session.service import SessionService

from .errors import Exit
from .exec_output import ExecOutput
from .output import visible
from .signals import StopSignals

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.core.handle import SessionHandle
    from mttui.core.slash import Parsed


def slash_in(prompt: str | None, settings: Settings) -> Parsed | None:
    """The slash command a PROMPT holds (``None``: a prompt for the model)."""
    if prompt is None:
        return None
    from mttui.core.slash import parse

    return parse(prompt, settings.provider)


def run_slash(args: argparse.Namespace, service: SessionService, settings: Settings,
              parsed: Parsed, ref: str | None, out: ExecOutput, sigs: StopSignals) -> int:
    """Run one slash command (opening session ``ref`` for writing when there is one)."""
    from mttui.core.handle import SessionHandle
    from mttui.core.slash import SlashContext, SlashError, UnknownCommand, check, run_command

    try:
        check(parsed)
    except UnknownCommand as exc:
        out.error(str(exc))
        return Exit.USAGE
    handle: SessionHandle | None = None
    session_id: str | None = None
    if ref is not None:
        handle = SessionHandle.open(service, settings, ref)
        sigs.target = handle
        session_id = handle.session_id
        service = handle.service
        settings = handle.settings
        w = handle.writer
        out.event("session", session_id=w.session_id, thread_id=w.thread_id, path=str(w.path))
    code: int = Exit.FAILED
    try:
        ctx = SlashContext(service, settings, session_id, lambda: handle)
        try:
            outcome = run_command(parsed, ctx)
            for event in outcome.events or ():
                out.show(event)
        except SlashError as exc:
            out.error(str(exc) if ref is not None else f"{exc} (use --session S)")
            code = Exit.FAILED if ref is not None else Exit.USAGE
            return code
        out.event("slash", command=outcome.command, text=outcome.text, **outcome.data)
        if outcome.text and not out.json_mode:
            print(visible(outcome.text), flush=True)
        code = Exit.OK
        return code
    finally:
        if handle is not None:
            handle.close()
            out.event("exit", session_id=handle.session_id, code=code)
