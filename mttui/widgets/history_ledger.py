"""The tool ledger's state on the history's interrupted tool calls (timetravel.md).

``tool_resolution`` markers say how the user settled a call; a denial of the new call
of a re-run (an ``approval_decision`` marker) means nothing ran, so the old call is
unsettled again. The label decides what a tool block offers: the three actions only
while the call is unsettled.
"""

from __future__ import annotations

from collections.abc import Iterable

from mttui.session.markers import LEDGER_KINDS, Marker

from .history_items import Item

ACTIONS = "alt+d mark done · alt+x mark failed · alt+r re-run"
TEXT = {
    "done": "marked done by the user",
    "failed": "marked failed by the user",
    "rerun": "re-run as a new call (below)",
}


def ledger_states(markers: Iterable[Marker]) -> dict[str, str]:
    """``call_id`` → ``done`` | ``failed`` | ``rerun`` | ``denied`` (a re-run denied) |
    ``not_started`` (a re-run never asked about: the index marks its resolution)."""
    states: dict[str, str] = {}
    reruns: dict[str, str] = {}  # new call id -> the old call it re-runs
    for m in sorted((m for m in markers if m.kind in LEDGER_KINDS), key=lambda m: m.record_seq):
        if m.kind == "resolution":
            call, state = str(m.data.get("call_id") or ""), str(m.data.get("resolution") or "")
            states[call] = "not_started" if m.data.get("not_started") else state
            new = m.data.get("rerun_call_id")
            if state == "rerun" and isinstance(new, str):
                reruns[new] = call
            continue
        decisions = m.data.get("decisions")
        for new, said in (decisions.items() if isinstance(decisions, dict) else ()):
            old = reruns.get(str(new))
            if said == "deny" and old is not None and states.get(old) == "rerun":
                states[old] = "denied"
    return states


def label_ledger(items: list[Item], markers: Iterable[Marker]) -> None:
    """Put each interrupted tool item's ledger state in ``item.data["ledger"]``."""
    states = ledger_states(markers)
    for item in items:
        if item.kind == "tool" and item.status == "interrupted" and item.call_id in states:
            item.data["ledger"] = states[item.call_id]
            item.invalidate()


def ledger_line(item: Item) -> str:
    """The line under an interrupted call: what happened to it, or what may be done."""
    state = str(item.data.get("ledger") or "")
    if state in TEXT:
        return TEXT[state]
    if state == "denied":
        return f"its re-run was denied; it may have run: {ACTIONS}"
    if state == "not_started":
        return f"its re-run never started; it may have run: {ACTIONS}"
    return f"it may have run: {ACTIONS}"


def can_settle(item: Item) -> bool:
    """Whether the ledger's actions apply: an interrupted call not settled (or whose
    re-run was denied)."""
    return item.status == "interrupted" and item.data.get("ledger") in (
        None, "denied", "not_started")
