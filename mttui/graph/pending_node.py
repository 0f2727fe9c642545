"""The ``steer`` graph node: Steers typed during a run join it at a safe boundary.

The boundaries (pending.md) are after a tool batch (``observation``) and after a
model call that asked for no tool (``reasoning`` would end the run). Never
between a tool call and its result, and never while an approval waits: the
graph only passes here on its way to the next model call. The node takes every
unread Steer in one batch (``ctx.steers.take``: one ``pending_read`` record) and
adds them as user messages; the next model call answers in a new message.
"""

from __future__ import annotations

from typing import Any

NODE = "steer"


def route(ctx: Any, otherwise: str) -> str:
    """``steer`` when Steers wait (and the run is not stopping), else ``otherwise``."""
    source = getattr(ctx, "steers", None)
    if source is None or ctx.stop.is_set():
        return otherwise
    return NODE if source.waiting() else otherwise


def after(state: dict[str, Any]) -> str:
    """Continue with a model call only if the node took something."""
    from langgraph.graph import END

    messages = state.get("messages") or []
    return "compression" if messages and getattr(messages[-1], "type", "") == "human" else END


STEER_MARK = "mttui_steer"


def steer_message(msg: dict[str, Any]) -> Any:
    """The LangChain message of a taken Steer (same id as in the transcript)."""
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=msg["content"], id=msg["id"],
                        additional_kwargs={STEER_MARK: True})  # fmt: skip


def merge_user_turns(messages: list[Any]) -> list[Any]:
    """What the model is sent: the Steers of one batch as one user message, texts
    joined by a blank line (pending.md). The checkpoint keeps them apart, so their
    ids stay those of the transcript."""
    from langchain_core.messages import HumanMessage

    out: list[Any] = []
    for msg in messages:
        prev: Any = out[-1] if out else None
        if (_steer(msg) and _steer(prev) and isinstance(msg.content, str)
                and isinstance(prev.content, str)):
            out[-1] = HumanMessage(content=f"{prev.content}\n\n{msg.content}", id=prev.id)
        else:
            out.append(msg)
    return out


def _steer(msg: Any) -> bool:
    return bool(getattr(msg, "additional_kwargs", {}).get(STEER_MARK))


def make_node(ctx: Any) -> Any:
    from langgraph.config import get_stream_writer

    def steer(state: dict[str, Any]) -> dict[str, Any]:
        source = getattr(ctx, "steers", None)
        taken = [] if source is None else source.take(get_stream_writer(), state.get("run_id"))
        return {"messages": [steer_message(m) for m in taken]}

    return steer
