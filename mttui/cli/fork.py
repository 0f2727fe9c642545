"""``mttui fork S [--at SEQ] [--title TITLE] [--json]`` (timetravel.md)."""

from __future__ import annotations

import argparse
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json, visible


def cmd_fork(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.fork import ForkRefused, fork

    try:
        result = fork(service, settings_from(args), args.session, at=args.at, title=args.title)
    except ForkRefused as exc:
        print(f"mttui: {visible(str(exc))}", file=sys.stderr)
        return Exit.USAGE
    if args.json:
        emit_json(result.as_json())
        return Exit.OK
    moved = f" (moved back from {result.adjusted_from}: it split a tool batch)" \
        if result.adjusted_from is not None else ""
    print(f"forked {result.source_id} at message {result.seq}{moved} → new session "
          f"{result.session_id} ({result.messages} messages)")
    return Exit.OK
