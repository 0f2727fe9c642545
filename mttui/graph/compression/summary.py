"""Making the summary: the cut, the model's snapshot of the older part, the new view."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mttui.session.records import new_id

from ..events import Compressed, RunEvent
from ..reasoning import call_model
from ..tokens import estimate_tokens
from .cut import SUMMARY_PREFIX, choose_cut, chunks
from .prompt import COMPRESS_MARKER, compress_request

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

KEEP_FRACTION = 0.3
CHUNK_FRACTION = 0.6  # of the token limit: one summary request's messages at most
SUMMARY_HEADER = "[Summary of the earlier conversation]\n"
WRITE_NOW = f"{COMPRESS_MARKER} Write the snapshot of the conversation above now."
NOT_SHORTER = "the summary would not be shorter than what it replaces; nothing changed"


class CompressionError(Exception):
    """The summary could not be made; nothing was changed."""


@dataclass
class Compression:
    messages: list[BaseMessage]  # the new view: [summary, kept…]
    record: dict[str, Any]  # fields of the ``compression`` record
    event: Compressed


def compress(
    model: BaseChatModel,
    messages: list[BaseMessage],
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
    view: list[BaseMessage] = [note, *kept]
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
    model: BaseChatModel, piece: list[BaseMessage], instructions: str | None, stop: threading.Event,
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


def _without_usage(message: BaseMessage) -> BaseMessage:
    if getattr(message, "type", "") == "ai" and getattr(message, "usage_metadata", None):
        return message.model_copy(update={"usage_metadata": None})
    return message


def _ignore(_event: RunEvent) -> None:
    """Summaries are not streamed to the user."""


def replace_all(view: list[BaseMessage]) -> list[BaseMessage]:
    """The ``messages`` update that makes the state exactly ``view`` (in that order)."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *view]
