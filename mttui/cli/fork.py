"""``mttui fork S [--at SEQ] [--title TITLE] [--json]`` and ``mttui fork S --finish``
(timetravel.md; ``--finish`` makes an incomplete fork again and removes it)."""

from __future__ import annotations

import argparse
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json, visible


def cmd_fork(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.fork import ForkRefused, fork
    from mttui.core.fork_guard import ForkFailed, finish

    settings = settings_from(args)
    if args.finish and (args.at is not None or args.title is not None):
        print("mttui: --finish takes no --at or --title: the fork is made again as it was "
              "asked", file=sys.stderr)
        return Exit.USAGE
    replaced = None
    try:
        if args.finish:
            result, replaced = finish(service, args.session, lambda src, seq, title: fork(
                service, settings, src, at=seq, title=title))
        else:
            result = fork(service, settings, args.session, at=args.at, title=args.title)
    except ForkRefused as exc:
        print(f"mttui: {visible(str(exc))}", file=sys.stderr)
        return Exit.USAGE
    except ForkFailed as exc:  # its own words: a full disk is not all there is to say
        print(f"mttui: {exc}", file=sys.stderr)
        return Exit.FAILED
    if args.json:
        emit_json({**result.as_json(), **({"replaced": replaced} if replaced else {})})
        return Exit.OK
    moved = f" (moved back from {result.adjusted_from}: it split a tool batch)" \
        if result.adjusted_from is not None else ""
    print(f"forked {result.source_id} at message {result.seq}{moved} → new session "
          f"{result.session_id} ({result.messages} messages)")
    if replaced:
        print(f"the incomplete fork {replaced} was removed")
    return Exit.OK
