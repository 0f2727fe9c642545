"""``mttui ledger S [--json]`` and ``mttui ledger S CALL_ID mark-done|mark-failed|rerun``."""

from __future__ import annotations

import argparse
import json
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import clip, emit_json, table


def cmd_ledger(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.ledger import LedgerRefused, ledger, settle

    if args.call_id is None:
        result = ledger(service, args.session)
        if args.json:
            emit_json(result.as_json())
        elif not result.calls:
            print("no interrupted tool calls")
        else:
            rows = [[c.call_id, c.state, c.tool_name, clip(json.dumps(c.arguments), 60)]
                    for c in result.calls]
            print(table(["CALL", "STATE", "TOOL", "ARGUMENTS"], rows))
        return Exit.OK
    if args.action is None:
        print("mttui: ledger CALL_ID needs an action: mark-done, mark-failed or rerun",
              file=sys.stderr)
        return Exit.USAGE
    if args.action == "rerun":
        print("mttui: rerun is not available yet; mark the call done or failed and ask the "
              "model to run it again", file=sys.stderr)
        return Exit.FAILED
    try:
        call = settle(service, settings_from(args), args.session, args.call_id, args.action,
                      args.note)
    except LedgerRefused as exc:
        print(f"mttui: {exc}", file=sys.stderr)
        return Exit.FAILED
    if args.json:
        emit_json({"session_id": service.resolve(args.session).id, "call": call.as_json()})
    else:
        print(f"{call.call_id}: {call.state}")
    return Exit.OK
