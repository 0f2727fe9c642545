"""Retrying a model request that failed before its answer began.

The provider's client is made with no retries of its own (a retry it makes
inside one call is invisible, and a long silence is all the user sees); this loop
sends the request again after a short backoff, at most ``max_retries`` times (the
count the model was made with, see :func:`allowed_retries`), and emits a
:class:`~mttui.graph.events.ModelRetry` before each wait so the chat can say
"retrying 1/2 after timeout". A stop ends the wait at once and nothing more is
sent. A request whose answer had begun (text already shown) is never sent again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .events import Emit, ModelRetry, RunEvent

RETRIES_KEY = "mttui_max_retries"  # where the model keeps its retry count (metadata)
BACKOFF_S = (0.5, 1.0, 2.0, 4.0)  # before retry 1, 2, 3, 4 and later
RETRY_STATUS = frozenset({408, 409, 425, 429})  # and every 5xx

Attempt = Callable[[Emit], tuple[Any, bool, BaseException | None]]


def allowed_retries(model: Any) -> int:
    """The retry count ``model`` (or the model a binding wraps) was made with; 0 for
    models that name none (the offline model, test doubles)."""
    seen = 0
    while model is not None and seen < 8:
        metadata = getattr(model, "metadata", None)
        if isinstance(metadata, dict) and RETRIES_KEY in metadata:
            return max(0, int(metadata[RETRIES_KEY]))
        model, seen = getattr(model, "bound", None), seen + 1
    return 0


def retry_reason(exc: BaseException) -> str | None:
    """Why ``exc`` is worth another try (``"timeout"``, ``"HTTP 503"`` …), else ``None``
    (a bad key, a bad request, a bug: the same request would fail the same way)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return f"HTTP {status}" if status in RETRY_STATUS or status >= 500 else None
    name = type(exc).__name__
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return "timeout"
    if "Connection" in name or isinstance(exc, ConnectionError):
        return "connection error"
    return None


def backoff(attempt: int) -> float:
    return BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1]


def with_retries(attempt: Attempt, *, retries: int, stop: threading.Event,
                 emit: Emit) -> tuple[Any, bool, BaseException | None, int]:
    """Run ``attempt`` (one request: ``(acc, interrupted, error)``) until it succeeds,
    fails in a way a retry cannot help, was stopped, or ``retries`` are used up.
    Returns its last result and the number of retries made."""
    made = 0
    while True:
        shown = False

        def watch(event: RunEvent) -> None:
            nonlocal shown
            shown = True
            emit(event)

        acc, interrupted, error = attempt(watch)
        reason = retry_reason(error) if error is not None and not shown else None
        if reason is None or made >= retries or stop.is_set():
            return acc, interrupted, error, made
        made += 1
        delay = backoff(made)
        emit(ModelRetry(made, retries, reason, delay))
        if stop.wait(delay):
            return None, True, None, made  # the user's stop during the wait: nothing sent
