"""Test-only crash points for the resume tests (never set in normal use).

``MTTUI_FAULT=before:<record type>`` or ``after:<record type>`` makes the process
SIGKILL itself right before / right after the first append of such a record
(after its fsync and index update), e.g. ``before:tool_dispatch``,
``after:tool_outcome``, ``after:approval_request``, ``after:approval_decision``.
That reaches points a test cannot hit by timing, such as "the outcome is
journaled but the checkpoint is not written yet".
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from typing import Any

from mttui.session.writer import SessionWriter


def arm(writer: SessionWriter) -> None:
    """Install the crash point named by ``MTTUI_FAULT`` on ``writer`` (if any)."""
    when, _, kind = os.environ.get("MTTUI_FAULT", "").partition(":")
    if when not in ("before", "after") or not kind:
        return
    original = writer.append_many

    def append_many(items: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        items = list(items)
        hit = any(type_ == kind for type_, _ in items)
        if hit and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        records = original(items)
        if hit:
            os.kill(os.getpid(), signal.SIGKILL)
        return records

    writer.append_many = append_many  # type: ignore[method-assign]
