"""``mttui exec``: one user turn, headless (cli.md "exec").

Exit codes: 0 done, 1 failed, 2 usage, 3 an approval is needed (``--approve ask``),
4 session locked, 5 session not found, 130 SIGINT, 143 SIGTERM. With ``--json``
every event is one JSON line, flushed as it happens.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from .cli_exec_output import ExecOutput

if TYPE_CHECKING:
    from .config import Settings
    from .graph.events import ApprovalRequested, RunEvent
    from .graph.runner import Runner
    from .session.service import SessionService
    from .session.writer import SessionWriter

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_APPROVAL, EXIT_LOCKED, EXIT_NOT_FOUND = 0, 1, 2, 3, 4, 5
EXIT_SIGINT, EXIT_SIGTERM, EXIT_SIGPIPE = 130, 143, 141


class StopSignals:
    """SIGINT/SIGTERM → a clean stop of the run; a second signal exits at once."""

    def __init__(self) -> None:
        self.code: int | None = None
        self.runner: Runner | None = None
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        except ValueError:  # not the main thread (embedded use): no handlers
            self._old.clear()

    def restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def __enter__(self) -> StopSignals:
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        code = EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM
        if self.code is not None:
            os._exit(code)  # second signal: the user insists (resume will recover)
        self.code = code
        if self.runner is not None:
            self.runner.stop()

    def pipe_closed(self) -> None:
        """Our output was closed (``| head``): stop the run like a signal would (141)."""
        if self.code is None:
            self.code = EXIT_SIGPIPE
        if self.runner is not None:
            self.runner.stop()


def run_in_worker(work: Callable[[], int]) -> int:
    """Run ``work`` in a thread while the main thread waits in short slices.

    Signal handlers only run in the main thread, and a SIGINT the kernel hands to a
    busy worker thread does not wake a main thread blocked on a lock: waiting in
    slices lets Ctrl+C and SIGTERM stop a run (or a long tool) at once.
    """
    result: list[int] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the main thread below
            failure.append(exc)

    thread = threading.Thread(target=target, name="mttui-run", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.1)
    if failure:
        raise failure[0]
    return result[0]


def run_exec(args: argparse.Namespace, service: SessionService) -> int:
    """Run ``mttui exec`` with parsed ``args``; returns the exit code."""
    out = ExecOutput(json_mode=bool(getattr(args, "json", False)))
    sigs = StopSignals()
    out.on_closed = sigs.pipe_closed
    sigs.install()
    try:
        return run_in_worker(lambda: _run(args, service, out, sigs))
    except Exception as exc:
        from .cli import report_error

        return report_error(exc)
    finally:
        sigs.restore()


def _run(
    args: argparse.Namespace, service: SessionService, out: ExecOutput, sigs: StopSignals
) -> int:
    from .config import load_settings

    flags = {k: getattr(args, k, None) for k in ("provider", "model", "base_url", "approval")}
    settings = load_settings(flags)
    prompt = args.prompt if args.prompt and args.prompt.strip() else None
    ref = args.resume or args.session or ("last" if getattr(args, "continue_", False) else None)
    if prompt is None and not args.resume:
        out.error("a PROMPT is required (only --resume S may go without one)")
        return EXIT_USAGE
    writer, service = _open(ref, prompt, settings, service)
    code = EXIT_FAILED
    runner: Runner | None = None
    try:
        from .graph.runner import Runner

        runner = Runner(
            writer, settings, checkpoints_path=service.checkpoints_path(), project=service.project
        )
        sigs.runner = runner
        out.event(
            "session",
            session_id=writer.session_id,
            thread_id=writer.thread_id,
            path=str(writer.path),
        )
        code = _session(args, runner, prompt, reopened=ref is not None, out=out, sigs=sigs)
        return code
    finally:
        if runner is not None:
            runner.end_session()
            runner.close()
        out.event("exit", session_id=writer.session_id, code=code)
        if not out.json_mode and code not in (EXIT_OK, EXIT_APPROVAL):
            out.note(f"session {writer.session_id}")
        writer.close()


def _open(
    ref: str | None, prompt: str | None, settings: Settings, service: SessionService
) -> tuple[SessionWriter, SessionService]:
    """The session to write (new or existing) and the service of its project."""
    if ref is None:
        from .session.records import title_from_text

        title = title_from_text(prompt or "") or None
        writer = service.create_session(
            provider=settings.provider, model=settings.model, title=title
        )
        return writer, service
    info = service.resolve(ref)  # SessionNotFound -> exit 5
    if info.project_hash != service.project_hash:
        from .session.service import SessionService as Service

        service = Service(service.layout.home, Path(info.project))
    writer = service.open_session(info.path)  # SessionLocked -> exit 4
    try:
        from .graph.resume.apply import check_resumable

        check_resumable(writer)  # a refused plan: one line, exit 1, nothing written
    except BaseException:
        writer.close()
        raise
    if (info.provider, info.model) != (settings.provider, settings.model):
        # this process talks to another model than the session did: say so in the log
        writer.append("session_update", provider=settings.provider, model=settings.model)
    return writer, service


def _session(
    args: argparse.Namespace,
    runner: Runner,
    prompt: str | None,
    *,
    reopened: bool,
    out: ExecOutput,
    sigs: StopSignals,
) -> int:
    pending: ApprovalRequested | None = None
    if reopened:
        from .graph.reopen import resume_session

        resumed = resume_session(runner)  # plan (read-only), then apply
        from .graph.pending_runtime import PendingInputs

        PendingInputs(runner.writer).settle()  # steers never read become errors (pending.md)
        out.event("resumed", mode=resumed.mode, warnings=resumed.warnings,
                  thread_id=runner.writer.thread_id)  # fmt: skip
        for w in resumed.warnings if not out.json_mode else []:
            out.note(f"resumed ({resumed.mode}): {w['code']}: {w['message']}")
        pending = resumed.pending
        if pending is not None:
            out.show(pending)
    if pending is not None:
        if args.approve == "ask":
            code: int | None = _needs_approval(runner, out)
        else:
            answered = answer_per_flag(runner, pending, args.approve)
            code = _drain(runner, answered, args.approve, out, sigs)
        if code is not None:
            if prompt:  # a new input while an approval waits is queued, not dropped
                from .cli_queue import queue_prompt

                queue_prompt(runner.writer, prompt, out)
            return code
    if prompt is None:
        return sigs.code or EXIT_OK
    if sigs.code:
        return sigs.code
    code = _drain(runner, runner.run(prompt), args.approve, out, sigs)
    return EXIT_OK if code is None else code


def _needs_approval(runner: Runner, out: ExecOutput) -> int:
    out.note(
        "approval needed; answer with: mttui exec --resume "
        f"{runner.writer.session_id} --approve all|none"
    )
    return EXIT_APPROVAL


def answer_per_flag(
    runner: Runner, request: ApprovalRequested, approve: str
) -> Iterator[RunEvent]:
    """Answer every call of ``request`` as ``--approve all|none`` says."""
    verdict = "approve" if approve == "all" else "deny"
    decisions = {c["call_id"]: verdict for c in request.tool_calls}
    reason = None if approve == "all" else "denied by --approve none"
    return runner.answer_approval(request.request_id, decisions, reason=reason)


def _drain(
    runner: Runner, events: Iterator[RunEvent], approve: str, out: ExecOutput, sigs: StopSignals
) -> int | None:
    """Print events until the run ends; answer approvals per ``--approve``.

    Returns an exit code, or ``None`` when the run completed (or nothing ran).
    """
    from .graph.events import ApprovalRequested, RunEnded

    while True:
        request: ApprovalRequested | None = None
        end: RunEnded | None = None
        for event in events:
            out.show(event)
            if isinstance(event, ApprovalRequested):
                request = event
            elif isinstance(event, RunEnded):
                end = event
        if end is None:
            return sigs.code
        if end.status == "awaiting_approval" and request is not None:
            if sigs.code:
                return sigs.code
            if approve == "ask":
                return _needs_approval(runner, out)
            events = answer_per_flag(runner, request, approve)
            continue
        if end.status == "completed":
            return sigs.code
        if end.status == "stopped":
            return sigs.code or EXIT_SIGINT
        out.error(end.error or f"run ended: {end.status}")
        return sigs.code or EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mttui.cli_exec`` (the same as ``mttui exec``)."""
    from .cli import build_parser
    from .session.paths import data_home
    from .session.service import SessionService

    args = build_parser().parse_args(["exec", *(sys.argv[1:] if argv is None else argv)])
    project = Path(args.project or os.getcwd())
    return run_exec(args, SessionService(data_home(), project))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
