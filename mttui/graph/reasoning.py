"""One model call: streamed, stoppable at any moment, errors turned into one line.

The stream is read off the node's thread so that a stop takes effect at once even
when the server sends nothing (a stalled connection): the node returns with the
partial answer. A provider with async streaming (``openai``) runs the request as a
task on the model loop (:mod:`.models.aio`), which reads the chunks and emits the
deltas itself (:mod:`.model_stream`), and a stop cancels that task: the
connection is closed at once and the client never retries after a user stop, also
while it waits for the first byte. Other models are read in a helper thread that
stops reading at the next chunk.

Everything the model says passes through a :class:`~mttui.graph.redact.Redactor`
here, before it is shown (the deltas too), logged or checkpointed: secret values
become ``[redacted:NAME]`` and lone surrogates U+FFFD.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .events import Emit, TextDelta
from .messages import content_text, new_message_id
from .model_stream import read_async
from .models.aio import streams_natively
from .models.errors import describe_model_error
from .redact import Redactor, StreamRedactor
from .retry import allowed_retries, with_retries
from .tokens import estimate_tokens, text_tokens

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.runnables import Runnable

    ChatRunnable = Runnable[LanguageModelInput, BaseMessage]

POLL_S = 0.05


@dataclass
class ModelResult:
    message: AIMessage | None = None  # with our id (None on error)
    usage: dict[str, Any] | None = None
    estimated: bool = False
    interrupted: bool = False
    error: str | None = None


def _pump(
    model: ChatRunnable, messages: Sequence[BaseMessage], stop: threading.Event,
    out: queue.Queue[Any],
) -> None:  # fmt: skip
    try:
        for chunk in model.stream(messages):
            out.put(("chunk", chunk))
            if stop.is_set():
                break  # closing the generator closes the HTTP response
    except BaseException as exc:  # handed to the node thread, which reports it
        out.put(("error", exc))
    finally:
        out.put(("done", None))


def _start(model: ChatRunnable, messages: Sequence[BaseMessage], stop: threading.Event,
           out: queue.Queue[Any]) -> None:
    """Start reading the stream of a model without async streaming, in a helper thread."""
    worker = threading.Thread(
        target=_pump, args=(model, messages, stop, out), name="mttui-model", daemon=True
    )
    worker.start()


def call_model(
    model: ChatRunnable,
    messages: Sequence[BaseMessage],
    stop: threading.Event,
    emit: Emit,
    *,
    base_url: str | None = None,
    redactor: Redactor | None = None,
) -> ModelResult:
    """Stream one answer, emitting :class:`TextDelta` events; never raises for provider errors.

    ``redactor``: the run's (default: one read from the environment now).
    """
    redact = redactor if redactor is not None else Redactor.from_env()
    msg_id = new_message_id()
    shown = redact.stream()

    def attempt(out: Emit) -> tuple[Any, bool, BaseException | None]:
        if streams_natively(model):  # read on the model loop; a stop cancels the request
            return read_async(model, messages, stop, out, msg_id, shown)
        chunks: queue.Queue[Any] = queue.Queue()
        _start(model, messages, stop, chunks)
        return _read(chunks, stop, out, msg_id, shown)

    acc, interrupted, error, retried = with_retries(
        attempt, retries=allowed_retries(model), stop=stop, emit=emit)
    if error is not None:
        line = describe_model_error(error, base_url)
        if retried:
            line += f" (after {retried} {'retry' if retried == 1 else 'retries'})"
        return ModelResult(error=redact.text(line))
    return _result(acc, interrupted, messages, msg_id, redact)


def _read(chunks: queue.Queue[Any], stop: threading.Event, emit: Emit, msg_id: str,
          shown: StreamRedactor) -> tuple[Any, bool, BaseException | None]:
    """Accumulate chunks until the end, an error or a stop: ``(acc, interrupted, error)``."""
    acc: Any = None
    interrupted = False
    while True:
        try:
            kind, item = chunks.get(timeout=POLL_S)
        except queue.Empty:
            if stop.is_set():
                interrupted = True
                break
            continue
        if kind == "done":
            break
        if kind == "error":
            if stop.is_set():
                interrupted = True
                break
            return None, False, item
        acc = item if acc is None else acc + item
        piece = shown.feed(content_text(item.content))
        if piece:
            emit(TextDelta(msg_id, piece))
        if stop.is_set():
            interrupted = True
            break
    rest = shown.flush()
    if rest:
        emit(TextDelta(msg_id, rest))
    return acc, interrupted, None


def _result(acc: Any, interrupted: bool, messages: Sequence[BaseMessage],
            msg_id: str, redact: Redactor) -> ModelResult:
    from langchain_core.messages import AIMessage

    text = redact.text(content_text(acc.content)) if acc is not None else ""
    # A stopped stream keeps its text but never half a tool call.
    calls = [] if interrupted or acc is None else [redact.data(c) for c in acc.tool_calls]
    invalid = [] if interrupted or acc is None else list(getattr(acc, "invalid_tool_calls", []))
    if invalid:
        names = redact.text(", ".join(str(c.get("name")) for c in invalid))
        return ModelResult(error=f"model sent tool calls with invalid arguments: {names}")
    provider = None if acc is None else getattr(acc, "usage_metadata", None)
    if provider and not interrupted:
        usage: dict[str, Any] = {
            "input_tokens": int(provider.get("input_tokens") or 0),
            "output_tokens": int(provider.get("output_tokens") or 0),
        }
        estimated = False
    else:
        usage = {
            "input_tokens": estimate_tokens(messages),
            "output_tokens": text_tokens(text),
            "estimated": True,
        }
        estimated = True
    metadata = {} if acc is None else redact.data(dict(getattr(acc, "response_metadata", {}) or {}))
    message = AIMessage(
        content=text,
        id=msg_id,
        tool_calls=calls,
        response_metadata=metadata,
        usage_metadata={
            "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        },
    )
    return ModelResult(message=message, usage=usage, estimated=estimated, interrupted=interrupted)
