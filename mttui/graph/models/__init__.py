"""Chat model providers: ``openai`` (any OpenAI-compatible server) and ``offline``.

Importing this package is cheap: LangChain is imported only by :func:`make_model`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ModelConfigError, describe_model_error
from .offline_text import OFFLINE_HELP

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from mttui.config import Settings

__all__ = ["OFFLINE_HELP", "ModelConfigError", "describe_model_error", "make_model"]


def make_model(settings: Settings) -> BaseChatModel:
    """A LangChain chat model for ``settings.provider`` (tools are bound by the graph)."""
    if settings.provider == "offline":
        from .offline import OfflineChatModel

        return OfflineChatModel(model_name=settings.model, chunk_delay=settings.offline_delay)
    if settings.provider == "openai":
        from .openai import make_openai

        return make_openai(settings)
    raise ModelConfigError(f"unknown provider {settings.provider!r}")
