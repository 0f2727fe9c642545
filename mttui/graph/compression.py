"""History compression (compression.md): what the model sees shrinks, the transcript never.

The kept part is the most recent messages worth about 30 % of the token budget,
cut only at safe points (compress_cut.py): a tool call and its results always
stay together, the kept part never starts with a tool message, and the latest
user request is always kept verbatim. The older part — with an earlier summary,
if any — is summarized by the model (in pieces when it is larger than the model
can read at once). Only once the summary exists is anything changed: a
``compression`` record is appended and the state becomes ``[summary, kept…]``.

Auto compression is its own graph node, run before every model call, so the
compressed state is checkpointed right after its record is written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mttui.session.records import new_id

from .compress_cut import SUMMARY_PREFIX, choose_cut, chunks, is_summary
from .compress_prompt import COMPRESS_MARKER, compress_request
from .events import Compressed, Notice
from .reasoning import call_model
from .tokens import estimate_tokens, text_tokens

__all__ = ["SUMMARY_HEADER", "SUMMARY_PREFIX", "CompressionError", "compress", "is_summary"]

KEEP_FRACTION = 0.3
CHUNK_FRACTION = 0.6  # of the token limit: one summary request's messages at most
MAX_FAILURES = 3  # in a row; then auto compression is off for the session
SUMMARY_HEADER = "[Summary of the earlier conversation]\n"
WRITE_NOW = f"{COMPRESS_MARKER} Write the snapshot of the conversation above now."
NOTHING_YET = "nothing older than the latest request to compress"
NOT_SHORTER = "the summary would not be shorter than what it replaces; nothing changed"

Emit = Callable[[Any], None]


class CompressionError(Exception):
    """The summary could not be made; nothing was changed."""


@dataclass
class Compression:
    messages: list[Any]  # the new view: [summary, kept…]
    record: dict[str, Any]  # fields of the ``compression`` record
    event: Compressed


def compress(
    model: Any,
    messages: list[Any],
    *,
    token_limit: int,
    trigger: str,
    instructions: str | None = None,
    stop: threading.Event | None = None,
    base_url: str | None = None,
    overhead: int = 0,
) -> Compression | None:
    """Summarize the older part of ``messages``; ``None`` when nothing can be compressed.

    Auto keeps about 30 % of the token limit; manual (``/compact``) keeps about
    30 % of what is there now. ``overhead`` (the system prompt) is added to both
    token figures. Raises :class:`CompressionError` when the model fails or
    answers nothing (or on a stop).
    """
    from langchain_core.messages import HumanMessage

    stop = stop or threading.Event()
    basis = token_limit if trigger == "auto" else min(token_limit, estimate_tokens(messages))
    cut = choose_cut(messages, int(basis * KEEP_FRACTION))
    if cut is None:
        return None
    summary: str | None = None
    for piece in chunks(cut.older, max(int(token_limit * CHUNK_FRACTION), 256)):
        if summary is not None:
            piece = [HumanMessage(content=SUMMARY_HEADER + summary), *piece]
        summary = _summarize(model, piece, instructions, stop, base_url)
    assert summary is not None
    note = HumanMessage(content=SUMMARY_HEADER + summary, id=new_id(SUMMARY_PREFIX.rstrip("-")))
    # usage reported before the cut describes the old view: never read it again
    kept = [_without_usage(m) for m in cut.kept]
    view = [note, *kept]
    before = estimate_tokens(messages) + overhead
    after = estimate_tokens(view) + overhead
    record = {
        "summary": summary,
        "removed_count": cut.removed,
        "kept_count": len(kept),
        "kept_message_ids": [m.id for m in kept],
        "trigger": trigger,
        "tokens_before": before,
        "tokens_after": after,
    }
    event = Compressed(cut.removed, len(kept), before, after, summary, trigger)
    return Compression(view, record, event)


def _summarize(
    model: Any, piece: list[Any], instructions: str | None, stop: threading.Event,
    base_url: str | None,
) -> str:  # fmt: skip
    from langchain_core.messages import HumanMessage, SystemMessage

    if stop.is_set():
        raise CompressionError("stopped")
    sent = [SystemMessage(content=compress_request(instructions)), *piece, HumanMessage(WRITE_NOW)]
    result = call_model(model, sent, stop, _ignore, base_url=base_url)
    if result.error:
        raise CompressionError(result.error)
    if result.interrupted:
        raise CompressionError("stopped")
    summary = str(result.message.content).strip() if result.message is not None else ""
    if not summary:
        raise CompressionError("the model gave no summary")
    return summary


def _without_usage(message: Any) -> Any:
    if getattr(message, "type", "") == "ai" and getattr(message, "usage_metadata", None):
        return message.model_copy(update={"usage_metadata": None})
    return message


def replace_all(view: list[Any]) -> list[Any]:
    """The ``messages`` update that makes the state exactly ``view`` (in that order)."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *view]


def _ignore(_event: Any) -> None:
    """Summaries are not streamed to the user."""


def input_tokens(ctx: Any, messages: list[Any]) -> int:
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


def maybe_compress(ctx: Any, messages: list[Any], emit: Emit) -> list[Any] | None:
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
        done = compress(ctx.summarizer, messages, token_limit=ctx.token_limit, trigger="auto",
                        stop=ctx.stop, base_url=ctx.base_url, overhead=overhead)  # fmt: skip
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
    ctx.journal.compression(emit, done.record, done.event)
    return done.messages


def make_node(ctx: Any) -> Any:
    """The ``compression`` graph node (runs before ``reasoning``)."""
    from langgraph.config import get_stream_writer

    from .messages import ToolPairingError, assert_paired

    def compression(state: dict[str, Any]) -> dict[str, Any]:
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


def compact_thread(runner: Any, instructions: str | None) -> Iterator[Any]:
    """Compress the runner's thread now (manual trigger); see :meth:`Runner.compact`."""
    from .checkpoints import prune_thread
    from .messages import ToolPairingError, assert_paired
    from .runner import RunnerError

    graph, config, ctx = runner.graph, runner.config, runner._ctx
    messages = list(graph.get_state(config).values.get("messages", []))
    try:
        assert_paired(messages)
    except ToolPairingError as exc:
        raise RunnerError(f"cannot compact before the session is resumed: {exc}") from None
    try:
        done = compress(ctx.summarizer, messages, token_limit=ctx.token_limit, trigger="manual",
                        instructions=instructions, stop=ctx.stop, base_url=ctx.base_url,
                        overhead=text_tokens(ctx.system_prompt))  # fmt: skip
    except CompressionError as exc:
        raise RunnerError(f"compression failed, nothing changed: {exc}") from None
    if done is None:
        yield Notice("info", NOTHING_YET if messages else "the session has no messages yet")
        return
    if done.record["tokens_after"] >= done.record["tokens_before"]:
        yield Notice("info", NOT_SHORTER)
        return
    events: list[Any] = []
    ctx.journal.compression(events.append, done.record, done.event)
    ctx.compress_failures = 0
    # as the observation node, with a stop reason: the thread stays at rest (next == ())
    graph.update_state(
        config,
        {"messages": replace_all(done.messages), "stop_reason": "compressed"},
        as_node="observation",
    )
    prune_thread(runner._saver, runner.writer.thread_id)
    runner.invalidate()
    yield from events
