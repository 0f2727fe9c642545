"""Deciding each tool call of a model answer (run, ask, deny, cancel), and where the
graph goes next.

The decision runs inside ``reasoning`` right after the answer (one checkpoint for
the answer and its decisions); the ``tool_routing`` node does the same for an
answer put on the thread from outside (``update_state(as_node="reasoning")``, the
tool ledger's re-run). Nothing here has a side effect: it reads the context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mttui.session.records import new_id

from .context import GraphContext
from .state import AgentState  # LangGraph reads the branch's state type at runtime
from .tools import risk_of
from .tools.policy import decide_call

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

ASKED = ("call_id", "tool_name", "arguments", "risk_level")  # what an approval request shows
MESSAGES_POLICY = "denied: approval mode 'deny' refuses calls that would need approval; not run"


def route_calls(ctx: GraphContext, run_id: str | None, last: BaseMessage) -> dict[str, Any]:
    """The state update that decides the calls of ``last`` (an assistant message)."""
    stopped = ctx.stop.is_set()
    pending: list[dict[str, Any]] = []
    asking: list[dict[str, Any]] = []
    for call in getattr(last, "tool_calls", None) or []:
        entry = {
            "call_id": call["id"],
            "tool_name": call["name"],
            "arguments": call["args"],
            "risk_level": ctx.risks.get(call["name"]) or risk_of(call["name"]),
            "status": "approved",
            "result": None,
            "error_msg": None,
        }
        real = ctx.mcp.real_name(call["name"]) if ctx.mcp is not None and call[
            "name"].startswith("mcp__") else None  # rules name an aliased tool by its real name
        verdict, rule = ("cancel", None) if stopped else decide_call(
            call["name"], call["args"], ctx.approval, ctx.remembered,
            rules=ctx.rules.current() if ctx.rules is not None else None,
            project=ctx.project, risk=ctx.risks.get(call["name"]), sandboxed=ctx.sandboxed,
            also=real,
            guardable=lambda: ctx.sandbox is not None and ctx.sandbox.guardable(ctx.project))
        if verdict == "guarded":  # unasked: what a rewind cannot restore stays read-only
            entry["guarded"] = True
        elif verdict == "cancel":
            entry["status"] = "cancelled"
        elif verdict == "deny":
            entry["status"] = "denied"
            entry["error_msg"] = f"denied by rule `{rule}`" if rule else MESSAGES_POLICY
        elif verdict == "ask":
            entry["status"] = "awaiting_approval"
            asking.append({k: entry[k] for k in ASKED})
        pending.append(entry)
    requests = []
    if asking:
        requests = [{"request_id": new_id("apr"), "run_id": run_id, "tool_calls": asking}]
    return {
        "pending_tool_calls": pending,
        "needs_human_approval": bool(asking),
        "approval_requests": requests,
    }


def routed(state: AgentState, last: BaseMessage) -> bool:
    """Whether the calls of ``last`` are decided already (by ``reasoning``)."""
    calls = [c["id"] for c in getattr(last, "tool_calls", None) or []]
    pending = [e.get("call_id") for e in state.get("pending_tool_calls") or []]
    return bool(calls) and pending == calls


def after_calls(state: AgentState) -> str:
    """Where decided calls go: an approval first, or straight to their execution."""
    return "human_approval" if state.get("needs_human_approval") else "tool_execution"


def observed(state: AgentState, done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``completed_tool_calls`` after a step: only what identifies a call (its output is
    in the log and in the messages; a copy here would ride along in every checkpoint)."""
    return list(state.get("completed_tool_calls", [])) + [
        {k: e[k] for k in ("call_id", "tool_name", "status") if k in e} for e in done
    ]
