"""``mttui exec``: one user turn, headless (cli.md "exec") — a face of ``mttui.core``.

Exit codes: 0 done, 1 failed, 2 usage, 3 an approval is needed (``--approve ask``),
4 session locked, 5 session not found, 129 SIGHUP, 130 SIGINT, 143 SIGTERM, 141 closed
output.
With ``--json`` every event is one JSON line, flushed as it happens.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mttui.session.service import SessionService

from .errors import Exit, report_error
from .exec_output import ExecOutput
from .options import settings_from
from .signals import StopSignals, run_in_worker

if TYPE_CHECKING:
    from mttui.core.drive import Approver, Outcome
    from mttui.core.handle import SessionHandle
    from mttui.graph.events import ApprovalRequested


def run_exec(args: argparse.Namespace, service: SessionService) -> int:
    """Run ``mttui exec`` with parsed ``args``; returns the exit code."""
    out = ExecOutput(json_mode=bool(getattr(args, "json", False)))
    sigs = StopSignals()
    out.on_closed = sigs.pipe_closed
    sigs.install()
    try:
        return run_in_worker(lambda: _run(args, service, out, sigs))
    except Exception as exc:
        return report_error(exc)
    finally:
        sigs.restore()


def approver(approve: str, sigs: StopSignals) -> Approver:
    """``--approve all|none`` answers every call; ``ask`` (or a stop) leaves it pending."""
    from mttui.core.handle import ApprovalAnswer

    def ask(request: ApprovalRequested) -> ApprovalAnswer | None:
        if approve == "ask" or sigs.code is not None:
            return None
        reason = None if approve == "all" else "denied by --approve none"
        return ApprovalAnswer.for_all(request, approve == "all", reason)

    return ask


def _run(args: argparse.Namespace, service: SessionService, out: ExecOutput,
         sigs: StopSignals) -> int:
    from mttui.core.handle import SessionHandle

    settings = settings_from(args)
    prompt = args.prompt if args.prompt and args.prompt.strip() else None
    ref = args.resume or args.session or ("last" if getattr(args, "continue_", False) else None)
    if prompt is None and not args.resume:
        out.error("a PROMPT is required (only --resume S may go without one)")
        return Exit.USAGE
    from .exec_slash import run_slash, slash_in

    parsed = slash_in(prompt, settings)
    if parsed is not None:  # handled here, never sent to the model
        return run_slash(args, service, settings, parsed, ref, out, sigs)
    if prompt is not None:  # a refused or missing @file: one line, exit 1, nothing sent
        from mttui.core.attachments import check

        check(service.project, prompt)
    if ref is None:
        assert prompt is not None
        handle = SessionHandle.create(service, settings, prompt)
    else:
        handle = SessionHandle.open(service, settings, ref)
    sigs.target = handle
    code: int = Exit.FAILED
    try:
        w = handle.writer
        out.event("session", session_id=w.session_id, thread_id=w.thread_id, path=str(w.path))
        code = _session(args, handle, prompt, reopened=ref is not None, out=out, sigs=sigs)
        return code
    finally:
        handle.close()
        out.event("exit", session_id=handle.session_id, code=code)
        if not out.json_mode and code not in (Exit.OK, Exit.APPROVAL):
            out.note(f"session {handle.session_id}")


def _session(args: argparse.Namespace, handle: SessionHandle, prompt: str | None, *,
             reopened: bool, out: ExecOutput, sigs: StopSignals) -> int:
    from mttui.core.drive import answer_waiting, send

    ask = approver(args.approve, sigs)
    if reopened:
        resumed = handle.resume()
        out.event("resumed", mode=resumed.mode, warnings=resumed.warnings,
                  thread_id=handle.writer.thread_id)  # fmt: skip
        for w in resumed.warnings if not out.json_mode else []:
            out.note(f"resumed ({resumed.mode}): {w['code']}: {w['message']}")
        if resumed.pending is not None:
            out.show(resumed.pending)
    if prompt is None:
        return exit_code(answer_waiting(handle, emit=out.show, ask=ask), handle, out, sigs)
    if sigs.code:
        return sigs.code
    outcome = send(handle, prompt, emit=out.show, ask=ask, stopped=lambda: bool(sigs.code))
    if outcome.queued is not None:
        out.event("queued", id=outcome.queued, text=prompt)
        out.note(f"the prompt was queued ({outcome.queued}): it runs after the approval, "
                 f"with `mttui queue resume {handle.session_id}`")
    elif outcome.not_sent is not None:
        out.note(f"the prompt was not sent: {outcome.not_sent}")
    return exit_code(outcome, handle, out, sigs)


def exit_code(outcome: Outcome, handle: SessionHandle, out: ExecOutput, sigs: StopSignals,
              command: str = "exec --resume") -> int:
    """The exit code of a driven turn (cli.md): a signal wins, then the run's end."""
    if outcome.waiting is not None:
        if sigs.code:
            return sigs.code
        out.note(f"approval needed; answer with: mttui {command} {handle.session_id} "
                 "--approve all|none")
        return Exit.APPROVAL
    if outcome.end is None or outcome.status == "completed":
        return sigs.code or Exit.OK
    if outcome.status == "stopped":
        return sigs.code or Exit.SIGINT
    out.error(outcome.end.error or f"run ended: {outcome.status}")
    return sigs.code or Exit.FAILED
