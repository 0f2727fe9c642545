"""Model errors as one readable line (no traceback ever reaches the user)."""

from __future__ import annotations


class ModelConfigError(Exception):
    """The provider cannot be used with these settings (one-line message)."""


def describe_model_error(exc: BaseException, base_url: str | None = None) -> str:
    """``"model request failed: HTTP 500 …"``-style text for a provider exception."""
    name = type(exc).__name__
    where = f" at {base_url}" if base_url else ""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        detail = _short(getattr(exc, "message", None) or str(exc))
        return f"model request failed: HTTP {status}{where}: {detail}"
    if "Timeout" in name:
        return f"model request timed out{where}"
    if "Connection" in name or isinstance(exc, ConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = _short(str(cause)) if cause else "connection failed"
        return f"cannot reach the model server{where}: {why}"
    return f"model request failed: {name}: {_short(str(exc))}"


def _short(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
