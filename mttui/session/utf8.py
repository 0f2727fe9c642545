"""Text that UTF-8 can encode: lone surrogates become U+FFFD.

A ``str`` may hold surrogate code points that no UTF-8 file can store: a model
that streams a ``"\\ud800"`` JSON escape, or a file name with invalid bytes
(``os`` decodes those with ``surrogateescape``). A proper high+low pair is
joined into the one character it stands for; any other surrogate becomes
U+FFFD (the replacement character).
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """``text`` with every surrogate code point fixed (unchanged, and cheap, when none)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_data(value: object) -> object:
    """A JSON-like value with :func:`valid_text` applied to every string (keys too)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(k): valid_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_data(v) for v in value]
    return value
