"""The ``openai`` provider: ``ChatOpenAI`` against any OpenAI-compatible server."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..retry import RETRIES_KEY
from .errors import ModelConfigError

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

    from mttui.config import Settings

# Local servers (vLLM, Ollama, LM Studio) accept any key; the client insists on one.
PLACEHOLDER_KEY = "not-needed"
# The warm-up's imports and a first request's, one thread at a time: two threads
# importing one package's modules in opposite orders can be handed a module that the
# other is still initialising (Python's import lock lets a circular wait through).
_LOADING = threading.Lock()
_MADE = threading.Event()  # a model was made: its requests load what they need themselves


def make_openai(settings: Settings) -> ChatOpenAI:
    """``ChatOpenAI`` with streaming usage and a timeout; the request is retried (backoff on
    timeouts, lost connections, 429/5xx) by ``graph/retry.py``, not by the client. Its
    messages and tools are sent without the client's parameter walk (:mod:`.payload`)."""
    if not settings.api_key and not settings.base_url:
        raise ModelConfigError(
            "provider openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    with _LOADING:  # waits for a warm-up still importing the client
        from .payload import fast_chat_openai

        _MADE.set()
        return fast_chat_openai()(
            model=settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key or PLACEHOLDER_KEY,  # type: ignore[arg-type]
            streaming=True,
            stream_usage=True,
            max_retries=0,  # retried by graph/retry.py, where the chat can see it
            metadata={RETRIES_KEY: settings.max_retries},
            timeout=settings.timeout,
        )


def warm_up() -> None:
    """Load what a first request would load (the app does it in a thread once it has
    shown its first screen): the client's modules and the model class, a pydantic class
    made on first use. Done in the request instead, this work competed with the UI for
    the interpreter while the first answer streamed (keys waited up to 0.9 s)."""
    import contextlib
    import importlib

    from .payload import fast_chat_openai

    with _LOADING:
        if _MADE.is_set():  # too late: a request is loading what it needs
            return
        fast_chat_openai()
        for name in FIRST_REQUEST:
            # another version of the client may lay its modules out otherwise: skipped
            with contextlib.suppress(ImportError):
                importlib.import_module(name)


# What a first streamed request imports besides (seen by comparing the modules loaded
# before and after one): the client's chat resource and stream reader, and its HTTP stack.
FIRST_REQUEST = (
    "openai.resources.chat.chat", "openai.resources.chat.completions.completions",
    "openai.lib.streaming.chat", "jiter",
    "httpcore", "httpcore2", "h11", "anyio._backends._asyncio", "truststore",
)  # fmt: skip
