"""``mttui ledger S [--json]`` and ``mttui ledger S CALL_ID mark-done|mark-failed|rerun``."""

from __future__ import annotations

import argparse
import json
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import clip, emit_json, table, visible


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
        return _rerun(args, service)
    try:
        call = settle(service, settings_from(args), args.session, args.call_id, args.action,
                      args.note)
    except LedgerRefused as exc:
        print(f"mttui: {visible(str(exc))}", file=sys.stderr)
        return Exit.FAILED
    if args.json:
        emit_json({"session_id": service.resolve(args.session).id, "call": call.as_json()})
    else:
        print(f"{call.call_id}: {call.state}")
    return Exit.OK


def _rerun(args: argparse.Namespace, service: SessionService) -> int:
    """A new call of the same tool and arguments in a new run, after a new approval."""
    from mttui.core.drive import drive
    from mttui.core.handle import SessionHandle
    from mttui.core.ledger import LedgerRefused, rerun

    from .exec import approver, exit_code
    from .exec_output import ExecOutput
    from .signals import StopSignals

    out = ExecOutput(json_mode=bool(args.json))
    sigs = StopSignals()
    handle = SessionHandle.open(service, settings_from(args), args.session)
    sigs.target = handle
    code: int = Exit.FAILED
    try:
        w = handle.writer
        out.event("session", session_id=w.session_id, thread_id=w.thread_id, path=str(w.path))
        handle.resume()
        try:
            events = rerun(handle, service, args.call_id, args.note)
        except LedgerRefused as exc:
            out.error(str(exc))
            return Exit.FAILED
        outcome = drive(handle, events, emit=out.show, ask=approver(args.approve, sigs))
        code = exit_code(outcome, handle, out, sigs)
        return code
    finally:
        handle.close()
        out.event("exit", session_id=handle.session_id, code=code)
