"""``mttui`` with a crash point, for the crash tests (run as a script in a subprocess).

``MTTUI_FAULT=before:<record type>`` or ``after:<record type>`` makes the process
SIGKILL itself right before / right after the first append of such a record
(after its fsync and index update), e.g. ``before:tool_dispatch``,
``after:tool_outcome``, ``after:approval_request``, ``after:approval_decision``.
That reaches points a test cannot hit by timing, such as "the outcome is
journaled but the checkpoint is not written yet". Without it this is plain ``mttui``.

Usage: ``python tests/support/fault_entry.py exec --json …`` (the arguments of ``mttui``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable
from typing import Any

from mttui.cli import main
from mttui.session.writer import SessionWriter


def arm(spec: str) -> None:
    """Install the crash point ``spec`` on every session writer (a no-op when empty)."""
    when, _, kind = spec.partition(":")
    if when not in ("before", "after") or not kind:
        return
    original = SessionWriter.append_many  # append() goes through append_many()

    def append_many(
        self: SessionWriter, items: Iterable[tuple[str, dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        items = list(items)
        hit = any(type_ == kind for type_, _ in items)
        if hit and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        records = original(self, items)
        if hit:
            os.kill(os.getpid(), signal.SIGKILL)
        return records

    SessionWriter.append_many = append_many  # type: ignore[method-assign]


if __name__ == "__main__":
    arm(os.environ.get("MTTUI_FAULT", ""))
    sys.exit(main(sys.argv[1:]))
