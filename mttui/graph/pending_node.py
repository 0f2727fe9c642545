"""The ``steer`` graph node: Steers typed during a run join it at a safe boundary.

The boundaries (pending.md) are after a tool batch (``observation``) and after a
model call that asked for no tool (``reasoning`` would end the run). Never
between a tool call and its result, and never while an approval waits: the
graph only passes here on its way to the next model call. The node takes every
unread Steer in one batch (``ctx.steers.take``: one ``pending_read`` record) and
adds them as user messages; the next model call answers in a new message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .context import GraphContext
from .messages import STEER_MARK
from .state import AgentState, Node  # LangGraph reads the node's state type at runtime

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, HumanMessage

NODE = "steer"


def route(ctx: GraphContext, otherwise: str) -> str:
    """``steer`` when Steers wait (and the run is not stopping), else ``otherwise``."""
    source = ctx.steers
    if source is None or ctx.stop.is_set():
        return otherwise
    return NODE if source.waiting() else otherwise


def after(state: AgentState) -> str:
    """Continue with a model call only if the node took something."""
    from langgraph.graph import END

    messages = state.get("messages") or []
    return "compression" if messages and getattr(messages[-1], "type", "") == "human" else END




def steer_message(msg: dict[str, Any]) -> HumanMessage:
    """The LangChain message of a taken Steer (same id as in the transcript)."""
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=msg["content"], id=msg["id"],
                        additional_kwargs={STEER_MARK: True})  # fmt: skip


def merge_user_turns(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """What the model is sent: the Steers of one batch as one user message, texts
    joined by a blank line (pending.md). The checkpoint keeps them apart, so their
    ids stay those of the transcript."""
    from langchain_core.messages import HumanMessage

    out: list[BaseMessage] = []
    for msg in messages:
        prev = out[-1] if out else None
        if (prev is not None and _steer(msg) and _steer(prev) and isinstance(msg.content, str)
                and isinstance(prev.content, str)):
            # still marked a Steer: a third one of the batch joins it too
            out[-1] = HumanMessage(content=f"{prev.content}\n\n{msg.content}", id=prev.id,
                                   additional_kwargs=dict(prev.additional_kwargs))
        else:
            out.append(msg)
    return out


def _steer(msg: BaseMessage) -> bool:
    return bool(getattr(msg, "additional_kwargs", {}).get(STEER_MARK))


def make_node(ctx: GraphContext) -> Node:
    """The ``steer`` node: adds the Steers it takes as user messages."""
    from langgraph.config import get_stream_writer

    def steer(state: AgentState) -> dict[str, Any]:
        source = ctx.steers
        taken = [] if source is None else source.take(get_stream_writer(), state.get("run_id"))
        return {"messages": [steer_message(m) for m in taken]}

    return steer
