"""Reading an async model's stream on the model loop (:mod:`.models.aio`), with no
hand-off per chunk.

The request runs as a task on the model loop, in a copy of the node's context, so
the chunks are added up and the text deltas emitted (LangGraph's stream writer reads
the node's config from that context) right there; the node's thread only waits for
the end, or for a stop: then the task is cancelled (the HTTP connection closes at
once, the client never retries) and its partial answer kept. One wake-up of the node
per model call instead of one per chunk, which a loaded machine charged for in
scheduler time slices.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .events import Emit, TextDelta
from .messages import content_text
from .models.aio import model_loop
from .redact import StreamRedactor

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable

    ChatRunnable = Runnable[LanguageModelInput, BaseMessage]

POLL_S = 0.05  # how often a waiting node looks at the stop flag
SETTLE_S = 2.0  # how long a stopped node waits for its cancelled task to wind down
# A stream that arrives faster than it is parsed keeps the model loop busy: the
# client's per-chunk work (~0.25 ms, mostly building the SDK's chunk objects) took the
# interpreter lock from the UI for whole seconds, and a key waited 0.1-0.8 s (B13).
# After each BURST_S of the loop's CPU, counted from the first chunk, it lets go for
# PAUSE_S. A short answer (a tool call) never gets there; at a model's real pace a
# pause comes once in many chunks and delays nothing (the bytes wait in the socket).
BURST_S = 0.004
PAUSE_S = 0.002


class Pace:
    """Lets the model loop's thread go of the interpreter lock for ``PAUSE_S`` after
    each ``BURST_S`` of its CPU (``clock``: the thread's CPU time), counted from the
    first ``step`` (the first chunk: the request's own work is not a burst)."""

    def __init__(self, clock: Callable[[], float] = time.thread_time) -> None:
        self._clock = clock
        self._until: float | None = None
        self.pauses = 0

    async def step(self) -> None:
        now = self._clock()
        if self._until is None:
            self._until = now + BURST_S
        elif now >= self._until:
            self.pauses += 1
            await asyncio.sleep(PAUSE_S)  # the lock is free while the loop sleeps
            self._until = self._clock() + BURST_S


class _Reading:
    """What the task has read so far; ``done`` once it has ended (in any way)."""

    def __init__(self) -> None:
        self.acc: Any = None
        self.interrupted = False
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.task: asyncio.Task[None] | None = None


async def _read(model: ChatRunnable, messages: Sequence[BaseMessage], stop: threading.Event,
                emit: Emit, msg_id: str, shown: StreamRedactor, reading: _Reading) -> None:
    pace = Pace()
    try:
        async for chunk in model.astream(messages):
            await pace.step()
            reading.acc = chunk if reading.acc is None else reading.acc + chunk
            piece = shown.feed(content_text(chunk.content))
            if piece:
                emit(TextDelta(msg_id, piece))
            if stop.is_set():
                reading.interrupted = True
                break
    except asyncio.CancelledError:
        reading.interrupted = True  # a stop: the request is closed, nothing is retried
    except Exception as exc:  # reported by the node as one line
        if stop.is_set():
            reading.interrupted = True
        else:
            reading.error = exc
    finally:
        reading.done.set()


def read_async(model: ChatRunnable, messages: Sequence[BaseMessage], stop: threading.Event,
               emit: Emit, msg_id: str, shown: StreamRedactor
               ) -> tuple[Any, bool, BaseException | None]:
    """Stream one answer on the model loop: ``(acc, interrupted, error)`` like the
    thread reader of :mod:`.reasoning`; the deltas are emitted as they come."""
    reading = _Reading()
    loop = model_loop()
    context = contextvars.copy_context()  # the node's config, for the stream writer

    def start() -> None:
        coro = _read(model, messages, stop, emit, msg_id, shown, reading)
        reading.task = loop.create_task(coro, context=context)
        # also when cancelled before it ran (its ``finally`` never runs then)
        reading.task.add_done_callback(lambda _task: reading.done.set())

    loop.call_soon_threadsafe(start)
    try:
        while not reading.done.wait(POLL_S):
            if stop.is_set():
                break
    finally:
        if not reading.done.is_set():  # a stop, or a reader that went away
            loop.call_soon_threadsafe(_cancel, reading)
            reading.done.wait(SETTLE_S)  # no delta may follow the node's own events
            reading.interrupted = True
    rest = shown.flush()
    if rest and reading.error is None:
        emit(TextDelta(msg_id, rest))
    return reading.acc, reading.interrupted, reading.error


def _cancel(reading: _Reading) -> None:
    if reading.task is not None:
        reading.task.cancel()
    else:  # not started yet: it never will be
        reading.done.set()
