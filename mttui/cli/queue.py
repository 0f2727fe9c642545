"""``mttui queue list|add|edit|move|remove|resume`` (cli.md): pending inputs without the TUI.

``list`` only reads (no lock, never drains, never calls a model). The others take
the session's write lock (exit 4 while another process has it open). ``resume``
applies the resume plan like ``exec --resume``, then drains the queue as the TUI
does, answering approvals per ``--approve`` (``ask``: exit 3 at the first one).
"""

from __future__ import annotations

import argparse
import json

from mttui.session.service import SessionService

from .errors import Exit, report_error
from .exec_output import ExecOutput
from .options import settings_from
from .output import visible
from .signals import StopSignals, run_in_worker


def cmd_queue(args: argparse.Namespace, service: SessionService) -> int:
    action = args.queue_command
    if action == "list":
        return _list(args, service)
    if action == "resume":
        with StopSignals() as sigs:  # handlers belong to the main thread
            return run_in_worker(lambda: _resume(args, service, sigs))
    return _change(args, service)


def _list(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.lane_view import lane_view

    info = service.resolve(args.session)  # refreshes the session's index rows
    view = lane_view(service.layout, info.id, info.path)
    if args.json:
        print(json.dumps({"session_id": info.id, "held": view.held, "items": view.rows},
                         ensure_ascii=False))  # fmt: skip
        return Exit.OK
    if not view.rows:
        print(f"nothing pending in session {info.id}")
        return Exit.OK
    for row in view.rows:
        pos = str(row["position"]) if row["position"] is not None else "-"
        text = visible(" ".join(str(row["text"]).split()))
        text = text if len(text) <= 60 else text[:59] + "…"
        print(f"{pos:>3}  {str(row['id'])[:13]:<13}  {row['mode']!s:<5}  "
              f"{row['state']!s:<11}  {text}")
    if view.held:
        print(f"held: resume with `mttui queue resume {info.id}`")
    return Exit.OK


def _change(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.pending import PendingInputs

    info = service.resolve(args.session)
    with service.open_session(info.path) as writer:  # SessionLocked -> exit 4
        pending = PendingInputs(writer)
        action = args.queue_command
        if action != "add":  # the position `queue list` shows works as well as the id
            args.id = item_ref(pending.lane.order, args.id)
        if action == "add":
            item = pending.add(args.text)
            print(f"queued {item.id} at position {pending.lane.position(item.id)}")
        elif action == "edit":
            item = pending.edit(args.id, args.text)
            print(f"edited {item.id}")
        elif action == "move":
            item = pending.move(args.id, args.position)
            print(f"moved {item.id} to position {pending.lane.position(item.id)}")
        else:
            item = pending.remove(args.id)
            print(f"removed {item.id}")
    return Exit.OK


def item_ref(order: list[str], ref: str) -> str:
    """A queue item's id from ``ref``: its id, or its position (1 = the head)."""
    if ref.isdigit() and ref not in order and 1 <= int(ref) <= len(order):
        return order[int(ref) - 1]
    return ref


def _resume(args: argparse.Namespace, service: SessionService, sigs: StopSignals) -> int:
    from mttui.core.drive import resume_queue
    from mttui.core.handle import SessionHandle

    from .exec import approver, exit_code

    out = ExecOutput(json_mode=bool(args.json))
    out.on_closed = sigs.pipe_closed
    info = service.resolve(args.session)
    handle = SessionHandle.open(service, settings_from(args), info.id)
    sigs.target = handle
    code: int = Exit.FAILED
    try:
        w = handle.writer
        out.event("session", session_id=w.session_id, thread_id=w.thread_id, path=str(w.path))
        resumed = handle.resume()
        out.event("resumed", mode=resumed.mode, warnings=resumed.warnings)
        if resumed.pending is not None:
            out.show(resumed.pending)
        code = Exit.OK
        ran = -1 if resumed.pending is not None else 0  # the approval is not a queue run
        for outcome in resume_queue(handle, emit=out.show, ask=approver(args.approve, sigs),
                                    stop=lambda: sigs.code is not None):
            ran += 1
            if outcome.end is None and not outcome.waiting:
                if outcome.failed:  # not started: the item is back at the head
                    code = Exit.FAILED
                    break
                continue
            if outcome.status in ("completed", "stopped") and sigs.code is None:
                continue
            code = exit_code(outcome, handle, out, sigs, command="queue resume")
            break
        if sigs.code is not None:
            code = sigs.code
        elif code == Exit.OK and not ran and not out.json_mode:
            out.note("nothing to run: the queue is empty")
    except Exception as exc:
        code = report_error(exc)
    finally:
        handle.close()
        out.event("exit", session_id=handle.session_id, code=code)
    return code
