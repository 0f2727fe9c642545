"""``mttui checkpoints S [--json]``: the file snapshots of a session (timetravel.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mttui.session.service import SessionService
from mttui.session.snapshots import ShadowRepo, git_available
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold

from .output import emit_json, table


def cmd_checkpoints(args: argparse.Namespace, service: SessionService) -> int:
    info = service.resolve(args.session)
    records, _ = service.records(info.id)
    cps = read_timeline(info.path, fold(records).messages).checkpoints
    available = git_available() and ShadowRepo(service.layout.home, Path(info.project)).exists
    if args.json:
        emit_json({"session_id": info.id, "available": available,
                   "checkpoints": [c.as_json() for c in cps]})
        return 0
    if not git_available():
        print("file checkpoints are off: no `git` executable was found")
    if not cps:
        print(f"no file checkpoints in session {info.id} (a run that only reads takes none)")
        return 0
    rows = [[str(c.seq), c.created_at[:19].replace("T", " "),
             c.ref[:12] if c.error is None else f"FAILED: {c.error}"[:60], str(c.files),
             ", ".join(c.skipped) or "-"] for c in cps]
    print(table(["BEFORE MSG", "CREATED (UTC)", "REF", "FILES",
                 "SKIPPED (>10 MB, nested repos)"], rows))
    return 0
