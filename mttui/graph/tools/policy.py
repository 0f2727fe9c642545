"""Approval policy: which calls run at once, which ask, which are refused."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .registry import risk_of
from .rules import RuleSet

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


def decide_call(
    tool_name: str,
    args: object,
    mode: str,
    remembered: Iterable[str] = (),
    *,
    rules: RuleSet | None = None,
    project: Path | None = None,
    risk: str | None = None,
    sandboxed: bool = False,
    also: str | None = None,
    guardable: Callable[[], bool] | None = None,
) -> tuple[str, str | None]:
    """``(verdict, rule)`` for one call: :func:`decide`, with permission rules first.

    A matching ``deny`` rule refuses the call without asking (in every mode); a
    matching ``allow`` rule runs it without asking; a call a deny rule cannot see
    through (a shell script) asks in every mode but ``deny``. With the shell sandboxed,
    ``auto-edit`` runs shell commands unasked as ``guarded``: in the sandbox with
    what a rewind cannot restore read-only — unless ``guardable()`` says that is
    too much to bind, then the call asks. ``risk`` overrides the registry's level
    (MCP tools' trust). ``also``: a second name the rules may know the tool by (an
    aliased MCP tool's real name); a deny under either name wins."""
    if rules is not None:
        hits = [h for h in (rules.verdict(n, args, project)
                            for n in (tool_name, also) if n) if h is not None]
        hit = next((h for h in hits if h[0] == "deny"), hits[0] if hits else None)
        if hit is not None:
            effect, rule = hit
            if effect == "ask":
                return ("deny" if mode == "deny" else "ask"), rule
            return ("deny" if effect == "deny" else "run"), rule
    if sandboxed and mode == "auto-edit" and tool_name == "shell" and (
            guardable is None or guardable()):
        return "guarded", None
    level = risk or risk_of(tool_name)
    if mode == "deny":
        return ("deny" if level in ("medium", "high") else "run"), None
    if level in _ASKING.get(mode, _ASKING["ask"]):
        return ("run" if tool_name in set(remembered) else "ask"), None
    return "run", None
