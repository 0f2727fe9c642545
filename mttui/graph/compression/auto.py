"""Auto compression: the ``compression`` graph node, run before every model call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context import GraphContext
from ..events import Emit, Notice
from ..messages import ToolPairingError, assert_paired
from ..state import AgentState, Node  # LangGraph reads the node's state type at runtime
from ..tokens import estimate_tokens, text_tokens
from .summary import NOT_SHORTER, CompressionError, compress, replace_all

if TYPE_CHECKING:
    from langchain_core.messages import AnyMessage, BaseMessage

MAX_FAILURES = 3  # in a row; then auto compression is off for the session


def input_tokens(ctx: GraphContext, messages: list[AnyMessage]) -> int:
    """The input of the coming model call: the previous call's reported input and
    output plus an estimate of what came after, or the local estimate of everything
    — whichever is larger, so a server that sends no usage never disables this."""
    estimate = estimate_tokens(messages) + text_tokens(ctx.system_prompt)
    for i in range(len(messages) - 1, -1, -1):
        usage = getattr(messages[i], "usage_metadata", None)
        if messages[i].type == "ai" and usage:
            reported = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            return max(estimate, reported + estimate_tokens(messages[i + 1 :]))
    return estimate


def wants_compression(ctx: GraphContext, state: AgentState) -> bool:
    """Whether the ``compression`` node would try to compress before the next model
    call (read-only: the graph skips the node, and its checkpoint, when not)."""
    if ctx.stop.is_set() or state.get("step_count", 0) >= ctx.max_steps:
        return False
    if not ctx.auto_compress or ctx.compress_failures >= MAX_FAILURES:
        return False
    messages = state.get("messages") or []
    return input_tokens(ctx, messages) > ctx.token_limit * ctx.compression_threshold


def maybe_compress(
    ctx: GraphContext, messages: list[AnyMessage], emit: Emit
) -> list[BaseMessage] | None:
    """Auto compression before a model call; the new view, or ``None`` (unchanged).

    Fires when :func:`input_tokens` exceeds ``token_limit * compression_threshold``.
    Nothing to compress is not a failure; after :data:`MAX_FAILURES` failures in
    a row auto compression stays off for the session (``/compact`` still works).
    """
    if not ctx.auto_compress or ctx.compress_failures >= MAX_FAILURES:
        return None
    if input_tokens(ctx, messages) <= ctx.token_limit * ctx.compression_threshold:
        return None
    overhead = text_tokens(ctx.system_prompt)
    try:
        done = compress(ctx.summary_model, list(messages), token_limit=ctx.token_limit,
                        trigger="auto", stop=ctx.stop, base_url=ctx.base_url,
                        overhead=overhead)  # fmt: skip
        if done is not None and done.record["tokens_after"] >= done.record["tokens_before"]:
            raise CompressionError(NOT_SHORTER.split(";")[0])
    except CompressionError as exc:
        if ctx.stop.is_set():
            return None  # a stop is not a failure
        ctx.compress_failures += 1
        emit(Notice("warning", f"history compression failed, nothing changed: {exc}"))
        if ctx.compress_failures >= MAX_FAILURES:
            emit(Notice("error", f"automatic compression is off for this session after "
                        f"{MAX_FAILURES} failures in a row; use /compact to retry"))  # fmt: skip
        return None
    if done is None:
        return None
    ctx.compress_failures = 0
    ctx.run_journal.compression(emit, done.record, done.event)
    return done.messages


def make_node(ctx: GraphContext) -> Node:
    """The ``compression`` graph node (runs before ``reasoning``)."""
    from langgraph.config import get_stream_writer

    def compression(state: AgentState) -> dict[str, Any]:
        if ctx.stop.is_set() or state.get("step_count", 0) >= ctx.max_steps:
            return {}
        messages = list(state.get("messages", []))
        try:
            assert_paired(messages)
        except ToolPairingError:
            return {}  # reasoning refuses the model call and says why
        view = maybe_compress(ctx, messages, get_stream_writer())
        return {} if view is None else {"messages": replace_all(view)}

    return compression
