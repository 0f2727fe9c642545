"""One event loop thread for the model requests of this process.

A synchronous HTTP read cannot be interrupted from another thread: a stop during
the wait for the first byte used to leave the request running until the client
timeout, after which the client retried it (a second paid request). A request
made with the provider's async client runs as a task on this loop instead, and a
stop cancels it: the connection is closed at once and no retry is made.

One loop for the whole process (not one per call) because the provider's async
HTTP client keeps its pooled connections bound to the loop that opened them.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def model_loop() -> asyncio.AbstractEventLoop:
    """The running loop of the model thread (started on first use, a daemon)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mttui-model-loop",
                                      daemon=True)
            thread.start()
            _loop = loop
        return _loop


def streams_natively(model: Any) -> bool:
    """Whether ``model`` (or the model a ``bind_tools`` binding wraps) is an
    OpenAI-compatible chat model, whose async streaming makes cancelling its task
    really cancel the request. Other models (offline, test doubles) keep the thread
    path: their reads end at the next chunk. A model of that module exists only once
    the module is imported, so this never imports it."""
    base = sys.modules.get("langchain_openai.chat_models.base")
    bound = getattr(model, "bound", model)
    return base is not None and isinstance(bound, base.BaseChatOpenAI)
