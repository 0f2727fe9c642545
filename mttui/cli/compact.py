"""``mttui compact S [--instructions TEXT] [--json]``: compress a session's history now.

The session is opened for writing (exit 4 when another process holds it, 5 when
it is unknown), resumed first like ``exec`` does (resume.md: interrupted calls
closed, a transcript-only session rebuilt), then compressed with the configured
model. A pending approval is refused (exit 1): it must be answered first. A
failed summary changes nothing (exit 1); nothing to compress is not an error.
"""

from __future__ import annotations

import argparse

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json


def cmd_compact(args: argparse.Namespace, service: SessionService) -> int:
    """Run ``mttui compact``; errors propagate to the CLI's one-line reporting."""
    from mttui.core.compact import compact

    with_json = bool(getattr(args, "json", False))
    result = compact(service, settings_from(args), args.session,
                     getattr(args, "instructions", None) or None)
    if result.compressed is None:
        reason = result.reason
        if with_json:
            emit_json({"session_id": result.session_id, "compressed": False, "reason": reason})
        else:
            print(f"nothing to compress: {reason}")
        return Exit.OK
    done = result.compressed
    if with_json:
        emit_json({
            "session_id": result.session_id,
            "removed_count": done.removed_count,
            "kept_count": done.kept_count,
            "tokens_before": done.tokens_before,
            "tokens_after": done.tokens_after,
            "summary": done.summary,
        })
    else:
        print(f"compressed {done.removed_count} messages — "
              f"{done.tokens_before} → {done.tokens_after} tokens")
    return Exit.OK
