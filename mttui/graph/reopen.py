"""The minimal step before continuing a reopened session (``exec --resume/--session``).

This is the slot where the resume planner (resume.md) goes: it will plan
read-only first and report the full set of codes. Until then this only makes
the checkpoint safe to continue: an approval stays pending (asked again with
the same ``request_id``), and tool calls left open by a crash are closed —
``interrupted`` when their dispatch was journaled, ``cancelled`` otherwise —
never re-run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .journal import scan_log
from .repair import close_open_calls

if TYPE_CHECKING:
    from .runner import Runner


def reopen(runner: Runner) -> tuple[str, list[dict[str, Any]]]:
    """``(mode, warnings)``; appends ``session_resumed``. Runs no model and no tool."""
    warnings: list[dict[str, Any]] = []
    state = runner.graph.get_state(runner.config)
    if not state.values:
        warnings.append(
            {
                "code": "checkpoint_not_found",
                "message": "no checkpoint for this session's thread; the model starts afresh",
            }
        )
    elif state.interrupts:
        warnings.append({"code": "approval_pending", "message": "an approval will be asked again"})
    else:
        dispatched = scan_log(runner.writer.path).dispatched
        closed = close_open_calls(
            runner.graph, runner.config, runner.journal, lambda _e: None, dispatched=dispatched
        )
        interrupted = [c for c in closed if c in dispatched]
        dangling = [c for c in closed if c not in dispatched]
        if interrupted:
            warnings.append(
                {
                    "code": "tool_interrupted",
                    "count": len(interrupted),
                    "ids": interrupted,
                    "message": f"{len(interrupted)} tool call(s) were running when the "
                    "process stopped; not run again",
                }
            )
        if dangling:
            warnings.append(
                {
                    "code": "dangling_tool_call_closed",
                    "count": len(dangling),
                    "ids": dangling,
                    "message": f"{len(dangling)} tool call(s) had no result and were closed",
                }
            )
    mode = "execution" if state.values else "transcript"
    if mode == "transcript":
        warnings.append(
            {
                "code": "execution_not_restored",
                "message": "execution state not restored (checkpoint_not_found)",
            }
        )
    runner.invalidate()
    runner.writer.append("session_resumed", mode=mode, warnings=[w["code"] for w in warnings])
    return mode, warnings
