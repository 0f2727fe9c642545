"""Manual compression (``/compact``) of a thread at rest."""

from __future__ import annotations

from collections.abc import Iterator

from ..checkpoints import prune_thread
from ..errors import RunnerError
from ..events import Notice, RunEvent
from ..live import LiveThread
from ..messages import ToolPairingError, assert_paired
from ..tokens import text_tokens
from .summary import NOT_SHORTER, CompressionError, compress, replace_all

NOTHING_YET = "nothing older than the latest request to compress"


def compact_thread(live: LiveThread, instructions: str | None) -> Iterator[RunEvent]:
    """Compress the thread now (manual trigger); see :meth:`Runner.compact`."""
    graph, config, ctx = live.graph, live.config, live.ctx
    messages = list(graph.get_state(config).values.get("messages", []))
    try:
        assert_paired(messages)
    except ToolPairingError as exc:
        raise RunnerError(f"cannot compact before the session is resumed: {exc}") from None
    try:
        done = compress(ctx.summary_model, messages, token_limit=ctx.token_limit, trigger="manual",
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
    events: list[RunEvent] = []
    live.journal.compression(events.append, done.record, done.event)
    ctx.compress_failures = 0
    # as the observation node, with a stop reason: the thread stays at rest (next == ())
    graph.update_state(
        config,
        {"messages": replace_all(done.messages), "stop_reason": "compressed"},
        as_node="observation",
    )
    prune_thread(live.saver, live.thread_id)
    live.approvals.forget()
    yield from events
