"""``mttui queue list|add|edit|move|remove|resume`` (cli.md): pending inputs without the TUI.

``list`` only reads (no lock, never drains, never calls a model). The others take
the session's write lock (exit 4 while another process has it open). ``resume``
applies the resume plan like ``exec --resume``, then drains the queue as the TUI
does, answering approvals per ``--approve`` (``ask``: exit 3 at the first one).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_exec import StopSignals, answer_per_flag, run_in_worker
from .cli_exec_output import ExecOutput

if TYPE_CHECKING:
    from .graph.events import ApprovalRequested, RunEvent
    from .graph.runner import Runner
    from .session.service import SessionService

EXIT_OK, EXIT_FAILED, EXIT_APPROVAL = 0, 1, 3


def cmd_queue(args: argparse.Namespace, service: SessionService) -> int:
    action = args.queue_command
    if action == "list":
        return _list(args, service)
    if action == "resume":
        with StopSignals() as sigs:  # handlers belong to the main thread
            return run_in_worker(lambda: _resume(args, service, sigs))
    return _change(args, service)


def _list(args: argparse.Namespace, service: SessionService) -> int:
    import json

    from .session.index.pending_rows import lane_of
    from .session.lock import is_locked

    info = service.resolve(args.session)  # refreshes the session's index rows
    lane = lane_of(service.layout, info.id, info.path)
    # Nobody has it open: what waits is held until someone resumes the queue, and
    # unread steers were never delivered (they become errors at the next write).
    closed = not is_locked(info.path)
    held = {i.id for i in lane.queue()} if closed else set()
    stale = {i.id for i in lane.unread()} if closed else set()
    items = lane.view(held, stale)
    if args.json:
        print(json.dumps({"session_id": info.id, "held": bool(held), "items": items},
                         ensure_ascii=False))  # fmt: skip
        return EXIT_OK
    if not items:
        print(f"nothing pending in session {info.id}")
        return EXIT_OK
    for row in items:
        pos = str(row["position"]) if row["position"] is not None else "-"
        text = " ".join(str(row["text"]).split())
        text = text if len(text) <= 60 else text[:59] + "…"
        print(f"{pos:>3}  {str(row['id'])[:13]:<13}  {row['mode']:<5}  {row['state']:<11}  {text}")
    if held:
        print(f"held: resume with `mttui queue resume {info.id}`")
    return EXIT_OK


def _change(args: argparse.Namespace, service: SessionService) -> int:
    from .graph.pending_runtime import PendingInputs

    info = service.resolve(args.session)
    with service.open_session(info.path) as writer:  # SessionLocked -> exit 4
        pending = PendingInputs(writer)
        action = args.queue_command
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
    return EXIT_OK


def queue_prompt(writer: Any, prompt: str, out: ExecOutput) -> None:
    """``exec`` with a PROMPT while an approval waits: the prompt joins the queue."""
    from .graph.pending_runtime import PendingError, PendingInputs

    try:
        item = PendingInputs(writer).add(prompt)
    except PendingError as exc:
        out.note(f"the prompt was not sent: {exc}")
        return
    out.event("queued", id=item.id, text=prompt)
    out.note(f"the prompt was queued ({item.id}): it runs after the approval, with "
             f"`mttui queue resume {writer.session_id}`")


def _resume(args: argparse.Namespace, service: SessionService, sigs: StopSignals) -> int:
    from .config import load_settings
    from .graph.pending_runtime import PendingInputs
    from .graph.reopen import resume_session
    from .graph.runner import Runner

    flags = {k: getattr(args, k, None) for k in ("provider", "model", "base_url", "approval")}
    settings = load_settings(flags)
    out = ExecOutput(json_mode=bool(args.json))
    out.on_closed = sigs.pipe_closed
    info = service.resolve(args.session)
    code = EXIT_FAILED
    with service.open_session(info.path) as writer:
        runner = Runner(writer, settings, checkpoints_path=service.layout.checkpoints_path(
            info.project_hash), project=Path(info.project))  # fmt: skip
        sigs.runner = runner
        try:
            out.event("session", session_id=writer.session_id, thread_id=writer.thread_id,
                      path=str(writer.path))  # fmt: skip
            pending = PendingInputs(writer, runner)
            pending.settle()
            resumed = resume_session(runner)
            out.event("resumed", mode=resumed.mode, warnings=resumed.warnings)
            code = _drain(args.approve, runner, pending, resumed.pending, out, sigs)
        except Exception as exc:
            from .cli import report_error

            code = report_error(exc)
        finally:
            runner.end_session()
            runner.close()
            out.event("exit", session_id=writer.session_id, code=code)
    return code


def _drain(approve: str, runner: Runner, pending: Any, asked: ApprovalRequested | None,
           out: ExecOutput, sigs: StopSignals) -> int:
    if asked is not None:  # answer what was pending first (resume.md), then the queue
        out.show(asked)
        if approve == "ask":  # asked again, not answered: the queue stays held
            return _needs_approval(runner, out)
        code = _run(approve, runner, answer_per_flag(runner, asked, approve), out, sigs)
        if code is not None:
            return code
    pending.resume_queue()
    ran = 0
    for events in pending.drain(stop=lambda: sigs.code is not None):
        ran += 1
        code = _run(approve, runner, events, out, sigs)
        if code is not None:
            return code
    if sigs.code is not None:
        return sigs.code
    if not ran and not out.json_mode:
        out.note("nothing to run: the queue is empty")
    return EXIT_OK


def _needs_approval(runner: Runner, out: ExecOutput) -> int:
    out.note("approval needed; answer with: mttui queue resume "
             f"{runner.writer.session_id} --approve all|none")
    return EXIT_APPROVAL


def _run(approve: str, runner: Runner, events: Iterator[RunEvent], out: ExecOutput,
         sigs: StopSignals) -> int | None:
    """Print one run's events (approvals per ``approve``); an exit code, or ``None`` to go on."""
    from .graph.events import ApprovalRequested, Notice, RunEnded

    while True:
        request, end, failed = None, None, False
        for event in events:
            out.show(event)
            if isinstance(event, ApprovalRequested):
                request = event
            elif isinstance(event, RunEnded):
                end = event
            failed = failed or (isinstance(event, Notice) and event.level == "error")
        if sigs.code is not None:
            return sigs.code
        if end is None:  # not started: the item is back at the head (needs retry)
            return EXIT_FAILED if failed else None
        if end.status in ("completed", "stopped"):
            return None
        if end.status == "awaiting_approval" and request is not None:
            if approve == "ask":
                return _needs_approval(runner, out)
            events = answer_per_flag(runner, request, approve)
            continue
        out.error(end.error or f"run ended: {end.status}")
        return EXIT_FAILED
