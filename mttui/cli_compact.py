"""``mttui compact S [--instructions TEXT] [--json]``: compress a session's history now.

The session is opened for writing (exit 4 when another process holds it, 5 when
it is unknown), resumed first like ``exec`` does (resume.md: interrupted calls
closed, a transcript-only session rebuilt), then compressed with the configured
model. A pending approval is refused (exit 1): it must be answered first. A
failed summary changes nothing (exit 1); nothing to compress is not an error.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .cli_output import emit_json

if TYPE_CHECKING:
    from .graph.runner import Runner
    from .session.service import SessionService

EXIT_OK, EXIT_FAILED = 0, 1


def cmd_compact(args: argparse.Namespace, service: SessionService) -> int:
    """Run ``mttui compact``; errors propagate to the CLI's one-line reporting."""
    from .config import load_settings
    from .graph.resume.apply import check_resumable
    from .graph.runner import Runner

    flags = {k: getattr(args, k, None) for k in ("provider", "model", "base_url", "approval")}
    settings = load_settings(flags)
    info = service.resolve(args.session)  # SessionNotFound -> exit 5
    if info.project_hash != service.project_hash:
        from pathlib import Path

        from .session.service import SessionService as Service

        service = Service(service.layout.home, Path(info.project))
    writer = service.open_session(info.path)  # SessionLocked -> exit 4
    runner: Runner | None = None
    try:
        check_resumable(writer)  # an empty session: one line, nothing written
        runner = Runner.for_service(service, writer, settings)
        return _compact(args, runner)
    finally:
        if runner is not None:
            runner.end_session()
            runner.close()
        writer.close()


def _compact(args: argparse.Namespace, runner: Runner) -> int:
    from .graph.events import Compressed, Notice
    from .graph.reopen import resume_session
    from .graph.runner import RunnerError

    sid = runner.writer.session_id
    resumed = resume_session(runner)  # plan (read-only), then apply
    if resumed.pending is not None:
        raise RunnerError(
            "an approval is pending; answer it first with: "
            f"mttui exec --resume {sid} --approve all|none"
        )
    done: Compressed | None = None
    reason = "nothing to compress"
    for event in runner.compact(getattr(args, "instructions", None) or None):
        if isinstance(event, Compressed):
            done = event
        elif isinstance(event, Notice):
            reason = event.text
    if done is None:
        _print(args, {"session_id": sid, "compressed": False, "reason": reason},
               f"nothing to compress: {reason}")  # fmt: skip
        return EXIT_OK
    result = {
        "session_id": sid,
        "removed_count": done.removed_count,
        "kept_count": done.kept_count,
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
        "summary": done.summary,
    }
    _print(args, result, f"compressed {done.removed_count} messages — "
           f"{done.tokens_before} → {done.tokens_after} tokens")  # fmt: skip
    return EXIT_OK


def _print(args: argparse.Namespace, payload: dict[str, Any], line: str) -> None:
    if getattr(args, "json", False):
        emit_json(payload)
    else:
        print(line)

