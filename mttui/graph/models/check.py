"""Whether the settings can make a model, answered without building one (no LangChain):
a session is never created for a configuration that cannot run."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mttui.config import Settings

PROVIDERS = ("offline", "openai")


def config_problem(settings: Settings) -> str | None:
    """The one-line reason ``settings`` cannot make a model, or ``None``."""
    if settings.provider not in PROVIDERS:
        return f"unknown provider {settings.provider!r}"
    if settings.provider == "openai" and not settings.api_key and not settings.base_url:
        return "provider openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
    return None
