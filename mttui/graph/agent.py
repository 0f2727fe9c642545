"""The LangGraph agent: (compression →) reasoning (→ human_approval) → tool_execution
(→ compression …) → reasoning …

Two supersteps (two checkpoints) per tool step, as in a bare ReAct agent:
``reasoning`` decides the calls of its answer (run, ask, deny) and
``tool_execution`` observes its own step. ``compression`` runs only when it has
something to do, ``human_approval`` only when a call needs an answer.
``tool_routing`` and ``observation`` are reached only from outside (an answer or
results put on the thread by ``update_state``, as resume and the tool ledger do).

Imported only when a run starts (it pulls in LangGraph and LangChain). Nodes are
closures over a :class:`~mttui.graph.context.GraphContext`: the model, the journal
and the stop flag live in the process, never in the checkpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from . import pending_node as steers
from .compression.auto import make_node, wants_compression
from .context import GraphContext
from .messages import assert_paired, new_message_id, to_record, turn_message_id
from .reasoning import call_model
from .routing import after_calls, observed, route_calls, routed
from .state import AgentState
from .tools import execute_tool

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from .state import AgentGraph


MESSAGES_DENIED = "denied: the user did not approve this call; it was not run"
MESSAGES_CANCELLED = "cancelled: the run was stopped before this call started; it was not run"


def build_graph(ctx: GraphContext, checkpointer: BaseCheckpointSaver[str]) -> AgentGraph:
    """Compile the agent graph for ``ctx`` with ``checkpointer``."""

    def reasoning(state: AgentState) -> dict[str, Any]:
        emit = get_stream_writer()
        ctx.ensure_tools()  # MCP servers start when the first run needs tools
        mcp_warnings(ctx, emit)
        rule_warnings(ctx, emit)
        if ctx.stop.is_set():
            return {"stop_reason": "stopped"}
        steps = state.get("step_count", 0)
        if steps >= ctx.max_steps:
            return {"stop_reason": "step_limit", "step_count": steps}
        messages = list(state.get("messages", []))
        assert_paired(messages)  # before EVERY model call; raises, never repairs
        sent = [SystemMessage(content=ctx.system_prompt), *steers.merge_user_turns(messages)]
        result = call_model(
            ctx.tool_model, sent, ctx.stop, emit, base_url=ctx.base_url, redactor=ctx.redactor
        )
        if result.error is not None:
            # display-only: the error line goes to the transcript, not to the model
            record = {
                "id": new_message_id(),
                "role": "assistant",
                "content": result.error,
                "status": "error",
            }
            ctx.run_journal.message(emit, record)
            return {"stop_reason": "error", "error": result.error, "step_count": steps + 1}
        ai = result.message
        assert ai is not None  # no error: call_model made the message
        if result.interrupted and not ai.content:
            # stopped before the first word: nothing was said, nothing to keep
            return {"stop_reason": "stopped", "step_count": steps + 1}
        status = "interrupted" if result.interrupted else "sent"
        record = to_record(ai, status=status, usage=result.usage)
        ctx.run_journal.message(emit, record, estimated=result.estimated)
        update: dict[str, Any] = {"messages": [ai], "step_count": steps + 1}
        update["stop_reason"] = "stopped" if result.interrupted else None
        if ai.tool_calls and not result.interrupted:
            # decided here, checkpointed with the answer: no superstep of its own
            update.update(route_calls(ctx, state.get("run_id"), ai))
        return update

    def tool_routing(state: AgentState) -> dict[str, Any]:
        # an answer put on the thread from outside (reasoning decides its own calls)
        return route_calls(ctx, state.get("run_id"), state["messages"][-1])

    def human_approval(state: AgentState) -> dict[str, Any]:
        # Re-runs from the top on resume: nothing but interrupt() may happen here.
        request = state["approval_requests"][-1]
        answer = interrupt(request)
        decisions = (answer or {}).get("decisions") or {}
        reason = (answer or {}).get("reason")
        pending = []
        for entry in state["pending_tool_calls"]:
            entry = dict(entry)
            if entry["status"] == "awaiting_approval":
                verdict = decisions.get(entry["call_id"], "deny")
                if verdict == "approve":
                    entry["status"] = "approved"
                elif verdict == "cancel":
                    entry["status"] = "cancelled"
                else:
                    entry["status"] = "denied"
                    entry["error_msg"] = MESSAGES_DENIED + (
                        f" (reason: {reason})" if reason else ""
                    )
            pending.append(entry)
        return {
            "pending_tool_calls": pending,
            "needs_human_approval": False,
            "approval_requests": [],
        }

    def tool_execution(state: AgentState) -> dict[str, Any]:
        emit = get_stream_writer()
        run_id = state.get("run_id") or ""
        out_messages: list[ToolMessage] = []
        done: list[dict[str, Any]] = []
        turn = turn_message_id(state["messages"])  # the snapshot names this message
        for entry in state.get("pending_tool_calls", []):
            entry = dict(entry)
            if entry["status"] == "approved" and ctx.stop.is_set():
                entry["status"] = "cancelled"
            if entry["status"] == "approved":
                if entry["tool_name"] == "shell":
                    sandbox_notice(ctx, emit)
                real = ctx.mcp.route(entry["tool_name"]) if ctx.mcp is not None and entry[
                    "tool_name"].startswith("mcp__") else None
                with ctx.run_journal.tool_activity(entry["tool_name"]):
                    ctx.run_journal.dispatch(emit, run_id, entry, turn, real)  # fsynced first
                    res = execute_tool(
                        ctx.project,
                        entry["tool_name"],
                        entry["arguments"],
                        stop=ctx.stop,
                        grace=ctx.grace,
                        progress=ctx.tool_progress,
                        call_id=entry["call_id"],
                        sandbox=ctx.sandbox,
                        guarded=bool(entry.get("guarded")),
                        extra=ctx.mcp,
                    )
                status, text = res.status, res.output
            elif entry["status"] == "denied":
                status, text = "denied", entry.get("error_msg") or MESSAGES_DENIED
            else:
                status, text = "cancelled", MESSAGES_CANCELLED
            text = ctx.redactor.text(text)  # before it is logged, checkpointed, shown or sent
            entry["status"], entry["result"] = status, text
            msg = ToolMessage(
                content=text,
                tool_call_id=entry["call_id"],
                name=entry["tool_name"],
                id=new_message_id(),
                status="success" if status == "success" else "error",
            )
            shown = (
                "sent"
                if status in ("success", "denied")
                else ("interrupted" if status in ("interrupted", "cancelled") else "error")
            )
            ctx.run_journal.outcome(
                emit, run_id, entry, status, to_record(msg, status=shown, tool_status=status)
            )
            out_messages.append(msg)
            done.append(entry)
        # the step is observed here too (one checkpoint for the results and the step)
        update: dict[str, Any] = {"messages": out_messages, "pending_tool_calls": [],
                                  "completed_tool_calls": observed(state, done)}
        if ctx.stop.is_set():
            update["stop_reason"] = "stopped"
        return update

    def observation(state: AgentState) -> dict[str, Any]:
        # Reached only from outside (``update_state(as_node="tool_execution")`` by resume):
        # tool_execution observes its own steps.
        update: dict[str, Any] = {
            "completed_tool_calls": observed(state, state.get("pending_tool_calls", [])),
            "pending_tool_calls": []}
        if ctx.stop.is_set():
            update["stop_reason"] = "stopped"
        return update

    def model_step(state: AgentState) -> str:
        # compression only when it has something to do: otherwise no superstep of its own
        return "compression" if wants_compression(ctx, state) else "reasoning"

    def after_reasoning(state: AgentState) -> str:
        if state.get("stop_reason"):
            return END
        last = state["messages"][-1] if state.get("messages") else None
        if last is None or not getattr(last, "tool_calls", None):
            return steers.route(ctx, END)
        return after_calls(state) if routed(state, last) else "tool_routing"

    def after_execution(state: AgentState) -> str:
        if state.get("pending_tool_calls"):
            return "observation"  # results put on the thread from outside (resume)
        return after_observation(state)

    def after_observation(state: AgentState) -> str:
        return END if state.get("stop_reason") else steers.route(ctx, model_step(state))

    def after_steer(state: AgentState) -> str:
        return END if steers.after(state) == END else model_step(state)

    g = StateGraph(AgentState)
    g.add_node("compression", make_node(ctx))  # auto compression before each model call
    g.add_node("reasoning", reasoning)
    g.add_node("tool_routing", tool_routing)
    g.add_node("human_approval", human_approval)
    g.add_node("tool_execution", tool_execution)
    g.add_node("observation", observation)
    g.add_node(steers.NODE, steers.make_node(ctx))  # Steers typed during the run
    model_steps = ["compression", "reasoning"]
    g.add_conditional_edges(START, model_step, model_steps)
    g.add_edge("compression", "reasoning")
    g.add_conditional_edges("reasoning", after_reasoning, [
        "tool_routing", "human_approval", "tool_execution", steers.NODE, END])
    g.add_conditional_edges("tool_routing", after_calls, ["human_approval", "tool_execution"])
    g.add_edge("human_approval", "tool_execution")
    g.add_conditional_edges("tool_execution", after_execution,
                            ["observation", *model_steps, steers.NODE, END])
    g.add_conditional_edges("observation", after_observation, [*model_steps, steers.NODE, END])
    g.add_conditional_edges(steers.NODE, after_steer, [*model_steps, END])
    return g.compile(checkpointer=checkpointer)


def sandbox_notice(ctx: GraphContext, emit: Any) -> None:
    """Once per runner: say that shell commands run unsandboxed (bwrap unusable)."""
    from .events import Notice

    if ctx.sandbox is not None and not ctx.sandbox_noticed:
        ctx.sandbox_noticed = True
        text = ctx.sandbox.notice()
        if text:
            emit(Notice("warning", text))


def mcp_warnings(ctx: GraphContext, emit: Any) -> None:
    """MCP servers that failed to start or died: one warning each, as a notice."""
    from .events import Notice

    for text in ctx.mcp.take_warnings() if ctx.mcp is not None else []:
        emit(Notice("warning", text))


def rule_warnings(ctx: GraphContext, emit: Any) -> None:
    """A broken saved-rules file: one warning per problem and runner (its allow rules
    are ignored meanwhile, see ``tools.rule_source``)."""
    from .events import Notice
    from .tools.rule_source import rule_problems

    if ctx.rules is None or ctx.rules.path is None:
        return
    for text in rule_problems(ctx.rules.path):
        if text not in ctx.rules_warned:
            ctx.rules_warned.add(text)
            emit(Notice("warning", text))


def user_input(text: str, message_id: str, run_id: str) -> AgentState:
    """The graph input of a new user turn: resets the per-run counters."""
    return {
        "messages": [HumanMessage(content=text, id=message_id)],
        "run_id": run_id,
        "step_count": 0,
        "pending_tool_calls": [],
        "completed_tool_calls": [],
        "approval_requests": [],
        "needs_human_approval": False,
        "stop_reason": None,
        "error": None,
    }
