"""``mttui rewind S --to SEQ [--conversation|--code|--both] [--dry-run] [--yes] [--json]``
and ``mttui rewind S --undo`` (timetravel.md)."""

from __future__ import annotations

import argparse
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json, visible


def cmd_rewind(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.rewind import (
        RewindRefused,
        RewindResult,
        plan_rewind,
        rewind,
        undo_rewind,
    )

    if args.undo == (args.to is not None):
        print("mttui: rewind needs either --to SEQ or --undo", file=sys.stderr)
        return Exit.USAGE
    conversation = args.mode in ("conversation", "both")
    code = args.mode in ("code", "both")
    try:
        if args.dry_run:
            if args.undo:
                print("mttui: --dry-run goes with --to SEQ", file=sys.stderr)
                return Exit.USAGE
            result: RewindResult = plan_rewind(service, args.session, args.to,
                                               conversation=conversation, code=code)
        else:
            if not _confirmed(args):
                return Exit.USAGE
            settings = settings_from(args)
            if args.undo:
                result = undo_rewind(service, settings, args.session)
            else:
                result = rewind(service, settings, args.session, args.to,
                                conversation=conversation, code=code)
    except RewindRefused as exc:
        print(f"mttui: {visible(str(exc))}", file=sys.stderr)
        return Exit.USAGE if exc.usage else Exit.FAILED
    if args.json:
        emit_json(result.as_json())
        return Exit.OK
    _report(result, undo=args.undo)
    return Exit.OK


def _confirmed(args: argparse.Namespace) -> bool:
    if args.yes:
        return True
    what = "undo the last rewind" if args.undo else f"rewind to message {args.to} ({args.mode})"
    if not sys.stdin.isatty():
        print(f"mttui: refusing to {what} without --yes (stdin is not a terminal)",
              file=sys.stderr)
        return False
    answer = input(f"{what} of session {args.session}? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        print("mttui: nothing changed", file=sys.stderr)
        return False
    return True


def _report(result: object, *, undo: bool) -> None:
    from mttui.core.rewind import RewindResult

    assert isinstance(result, RewindResult)
    verb = "would" if result.dry_run else "did"
    head = "undo" if undo else f"rewind to message {result.to_seq}"
    parts = [p for p, on in (("conversation", result.conversation), ("code", result.code)) if on]
    print(f"{head} ({' + '.join(parts)}): {verb} restore {len(result.files_restored)} "
          f"file(s), {verb} delete {len(result.files_deleted)}")
    for path in result.files_restored:
        print(f"  restore  {visible(str(path))}")
    for path in result.files_deleted:
        print(f"  delete   {visible(str(path))}")
    if result.undo_ref:
        print(f"undo with: mttui rewind {result.session_id} --undo")
    if result.prompt:
        print("\nthe message rewound to:\n" + visible(result.prompt))
