"""Approval policy: which calls run at once, which ask, which are refused."""

from __future__ import annotations

from collections.abc import Iterable

from .registry import risk_of

# mode -> risk levels that ask (ask/auto-edit) or are refused (deny)
_ASKING = {"ask": {"medium", "high"}, "auto-edit": {"high"}, "yolo": set(), "deny": set()}


def decide(tool_name: str, mode: str, remembered: Iterable[str] = ()) -> str:
    """``run`` (no question), ``ask`` or ``deny`` for one call.

    - ``ask`` (default): medium and high risk ask; low runs.
    - ``auto-edit``: only high risk asks.
    - ``yolo``: nothing asks.
    - ``deny``: what would ask under ``ask`` is refused without asking.
    A tool approved "for the rest of the session" runs without asking (not in ``deny``).
    """
    risk = risk_of(tool_name)
    if mode == "deny":
        return "deny" if risk in ("medium", "high") else "run"
    if risk in _ASKING.get(mode, _ASKING["ask"]):
        return "run" if tool_name in set(remembered) else "ask"
    return "run"
