"""History compression (compression.md): what the model sees shrinks, the transcript never.

The kept part is the most recent messages worth about 30 % of the token limit,
cut only where a user turn starts (so a tool call and its results always stay
together, and the kept part never starts with a tool message); the latest user
request is always kept verbatim. The older part — with an earlier summary, if
any — is summarized by the model. Only once the summary exists is anything
changed: the state becomes ``[summary, kept…]`` and a ``compression`` record is
appended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mttui.session.records import new_id

from .compress_prompt import COMPRESS_MARKER, compress_request
from .events import Compressed
from .reasoning import call_model
from .tokens import estimate_tokens, text_tokens

KEEP_FRACTION = 0.3
MAX_FAILURES = 3  # in a row; then auto compression is off for the session
SUMMARY_PREFIX = "summary-"
SUMMARY_HEADER = "[Summary of the earlier conversation]\n"
WRITE_NOW = f"{COMPRESS_MARKER} Write the snapshot of the conversation above now."


class CompressionError(Exception):
    """The summary could not be made; nothing was changed."""


def is_summary(message: Any) -> bool:
    return str(getattr(message, "id", "") or "").startswith(SUMMARY_PREFIX)


def choose_cut(messages: list[Any], keep_budget: int) -> int | None:
    """Index where the kept part starts, or ``None`` when there is nothing to compress."""
    starts = [i for i, m in enumerate(messages) if m.type == "human" and not is_summary(m)]
    if not starts:
        return None
    cut = starts[-1]  # the latest user request is always kept
    for i in reversed(starts[:-1]):
        if estimate_tokens(messages[i:]) > keep_budget:
            break
        cut = i
    if all(is_summary(m) for m in messages[:cut]):
        return None
    return cut


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
) -> Compression | None:
    """Summarize the older part of ``messages``; ``None`` when nothing can be compressed.

    Auto keeps about 30 % of the token limit; manual (``/compact``) keeps about
    30 % of what is there now, so it always frees something once there are two
    turns. Raises :class:`CompressionError` when the model fails or answers nothing.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    basis = token_limit if trigger == "auto" else min(token_limit, estimate_tokens(messages))
    cut = choose_cut(messages, int(basis * KEEP_FRACTION))
    if cut is None:
        return None
    older, kept = messages[:cut], messages[cut:]
    sent = [SystemMessage(content=compress_request(instructions)), *older, HumanMessage(WRITE_NOW)]
    result = call_model(model, sent, stop or threading.Event(), _ignore, base_url=base_url)
    if result.error:
        raise CompressionError(result.error)
    summary = str(result.message.content).strip() if result.message is not None else ""
    if result.interrupted or not summary:
        raise CompressionError("the model gave no summary")
    note = HumanMessage(content=SUMMARY_HEADER + summary, id=new_id(SUMMARY_PREFIX.rstrip("-")))
    view = [note, *kept]
    before, after = estimate_tokens(messages), estimate_tokens(view)
    removed = sum(1 for m in older if not is_summary(m))
    record = {
        "summary": summary,
        "removed_count": removed,
        "kept_count": len(kept),
        "kept_message_ids": [m.id for m in kept],
        "trigger": trigger,
        "tokens_before": before,
        "tokens_after": after,
    }
    event = Compressed(removed, len(kept), before, after, summary, trigger)
    return Compression(view, record, event)


def replace_all(view: list[Any]) -> list[Any]:
    """The ``messages`` update that makes the state exactly ``view`` (in that order)."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *view]


def _ignore(_event: Any) -> None:
    """Summaries are not streamed to the user."""


Emit = Callable[[Any], None]


def maybe_compress(ctx: Any, messages: list[Any], emit: Emit) -> list[Any] | None:
    """Auto compression before a model call; the new view, or ``None`` (unchanged).

    Fires when the input of the coming call — the larger of the provider's last
    reported input and the local estimate, so a server that sends no usage never
    disables it — exceeds ``token_limit * compression_threshold``. After
    :data:`MAX_FAILURES` failures in a row it stays off for the session.
    """
    from .events import Notice

    if not ctx.auto_compress or ctx.compress_failures >= MAX_FAILURES:
        return None
    tokens = max(estimate_tokens(messages) + text_tokens(ctx.system_prompt), _last_input(messages))
    if tokens <= ctx.token_limit * ctx.compression_threshold:
        return None
    try:
        done = compress(
            ctx.summarizer,
            messages,
            token_limit=ctx.token_limit,
            trigger="auto",
            stop=ctx.stop,
            base_url=ctx.base_url,
        )
    except CompressionError as exc:
        ctx.compress_failures += 1
        emit(Notice("warning", f"history compression failed: {exc}"))
        if ctx.compress_failures >= MAX_FAILURES:
            emit(
                Notice(
                    "error",
                    f"automatic compression is off for this session after "
                    f"{MAX_FAILURES} failures in a row; use /compact to retry",
                )
            )
        return None
    ctx.compress_failures = 0
    if done is None:
        return None
    ctx.journal.compression(emit, done.record, done.event)
    return done.messages


def _last_input(messages: list[Any]) -> int:
    """The last call's reported input and output, plus an estimate of what came after."""
    for i in range(len(messages) - 1, -1, -1):
        usage = getattr(messages[i], "usage_metadata", None)
        if messages[i].type == "ai" and usage:
            reported = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            return reported + estimate_tokens(messages[i + 1 :])
    return 0


def compact_thread(runner: Any, instructions: str | None) -> Iterator[Any]:
    """Compress the runner's thread now (manual trigger); see :meth:`Runner.compact`."""
    from .checkpoints import prune_thread
    from .events import Notice
    from .runner import RunnerError

    graph, config, ctx = runner.graph, runner.config, runner._ctx
    messages = list(graph.get_state(config).values.get("messages", []))
    try:
        done = compress(
            ctx.summarizer,
            messages,
            token_limit=ctx.token_limit,
            trigger="manual",
            instructions=instructions,
            stop=ctx.stop,
            base_url=ctx.base_url,
        )
    except CompressionError as exc:
        raise RunnerError(f"compression failed, nothing changed: {exc}") from None
    if done is None:
        yield Notice("info", "nothing to compress yet")
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
