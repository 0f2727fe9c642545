"""Secrets out of tool results and model output (essentials.md, "Secrets").

The values of environment variables named like ``*_API_KEY``, ``*_TOKEN``,
``*SECRET*`` or ``*PASSWORD*`` (8 characters or longer) are replaced by
``[redacted:NAME]`` before text is logged, checkpointed, indexed, shown or sent
to the model; so are their reversed, hex and base64 spellings
(:mod:`mttui.graph.secret_forms`). The same pass makes the text encodable (lone surrogates become
U+FFFD, see :mod:`mttui.session.utf8`). The shell tool's environment leaves out
every variable with such a name (:func:`without_secrets`).

A :class:`Redactor` is built from the process environment once per run;
streamed text goes through a :class:`StreamRedactor`, which holds back the end
of a delta that could be the start of a secret until the next delta tells.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from mttui.session.utf8 import valid_text

from .secret_forms import MAX_GAP, forms, pattern, prefixes

MIN_SECRET_LENGTH = 8
_SUFFIXES = ("_API_KEY", "_TOKEN")
_PARTS = ("SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (any letter case)."""
    upper = name.upper()
    return upper.endswith(_SUFFIXES) or any(part in upper for part in _PARTS)


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the variables whose names mark them as secrets (any length)."""
    return {k: v for k, v in environ.items() if not is_secret_name(k)}


def _squeeze(text: str) -> str:
    return "".join(text.split())


def marker(name: str) -> str:
    """What a secret's value is replaced by."""
    return f"[redacted:{name}]"


@functools.lru_cache(maxsize=8)
def _spellings(secrets: tuple[tuple[str, str], ...]) -> tuple[dict[str, str],
                                                            re.Pattern[str] | None]:
    """Every spelling of each ``(value, name)`` (whitespace dropped) -> its name, and
    the pattern that finds them."""
    names: dict[str, str] = {}
    for value, name in secrets:
        for form in sorted(forms(value), key=len, reverse=True):
            names.setdefault(_squeeze(form), name)
    return names, pattern(names)


@functools.lru_cache(maxsize=8)
def _beginnings(secrets: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The proper beginnings of every spelling (built for the first streamed text)."""
    return prefixes(_spellings(secrets)[0])


class Redactor:
    """Replaces known secret values in text; with no secrets it only fixes encoding."""

    def __init__(self, secrets: Iterable[tuple[str, str]]) -> None:
        by_value: dict[str, str] = {}
        for name, raw in sorted(secrets):  # one value under several names: the first name
            value = valid_text(raw)
            if len(value) >= MIN_SECRET_LENGTH and value not in by_value:
                by_value[value] = name
        self._values = by_value
        self._key = tuple(by_value.items())
        spelled = _spellings(self._key)  # computed once per set of secrets
        self._names: dict[str, str] = spelled[0]  # every spelling (whitespace dropped) -> name
        self._pattern = spelled[1]
        self._longest = max(map(len, self._names), default=0)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        also: Mapping[str, str | None] | None = None,
    ) -> Redactor:
        """The secrets of ``environ`` (default: this process's environment), and ``also``
        (secrets from elsewhere, e.g. the API key of the config file, by name)."""
        env = os.environ if environ is None else environ
        pairs = [(k, v) for k, v in env.items() if is_secret_name(k)]
        return cls(pairs + [(k, v) for k, v in (also or {}).items() if v])

    @property
    def names(self) -> list[str]:
        """The names of the secrets this redactor replaces."""
        return sorted(set(self._values.values()))

    def found(self, text: str) -> list[str]:
        """The names of the secrets ``text`` holds, in any spelling."""
        if self._pattern is None:
            return []
        return sorted({self._name(m) for m in self._pattern.finditer(text)})

    def _name(self, m: re.Match[str]) -> str:
        return self._names[_squeeze(m.group(0))]

    def text(self, text: str) -> str:
        """``text`` made encodable, with every secret value replaced by its marker."""
        text = valid_text(text)
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: marker(self._name(m)), text)

    def data(self, value: Any) -> Any:
        """A JSON-like value with :meth:`text` applied to every string (keys too)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def stream(self) -> StreamRedactor:
        """A redactor for one streamed text."""
        return StreamRedactor(self)

    def safe_end(self, buf: str) -> int:
        """Where the part of ``buf`` that is safe to show ends."""
        cut = len(buf)
        if self._pattern is not None:
            cut = self._hold_from(buf)  # the longest tail that could still grow into a secret
            for m in self._pattern.finditer(buf):  # a whole secret is not cut in two
                if m.start() < cut < m.end():
                    cut = m.start()
                    break
        if cut and "\ud800" <= buf[cut - 1] <= "\udbff":
            cut -= 1  # a high surrogate waits for its low half
        return cut

    def _hold_from(self, buf: str) -> int:
        """Where the longest tail of ``buf`` that begins some spelling starts (whitespace
        inside it ignored, as the pattern allows), else ``len(buf)``."""
        begins = _beginnings(self._key)
        start = max(0, len(buf) - self._longest * (MAX_GAP + 1))
        places = [i for i in range(start, len(buf)) if not buf[i].isspace()]
        squeezed = "".join(buf[i] for i in places)
        for j, i in enumerate(places):
            if len(squeezed) - j < self._longest and squeezed[j:] in begins:
                return i
        return len(buf)


class StreamRedactor:
    """Redacts a text that arrives in pieces; what it returns never shows a secret.

    The pieces returned by :meth:`feed` and :meth:`flush`, joined, equal
    :meth:`Redactor.text` of the whole text.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, piece: str) -> str:
        """The part of the text so far that can be shown now (maybe empty)."""
        buf = self._held + piece
        cut = self._redactor.safe_end(buf)
        self._held = buf[cut:]
        return self._redactor.text(buf[:cut])

    def flush(self) -> str:
        """The rest of the text, at its end."""
        rest, self._held = self._held, ""
        return self._redactor.text(rest)


def redact_prompt(redactor: Redactor, users: list[dict[str, Any]],
                  model_text: str | None) -> tuple[str | None, list[str]]:
    """The user's own messages with their secrets replaced (``users``' content in place,
    and ``model_text``, the text with its ``@file`` blocks, returned) and what to
    tell the user about it."""
    said: list[str] = []
    typed: set[str] = set()
    first = str(users[0].get("content") or "") if users else ""
    for user in users:
        content = str(user.get("content") or "")
        typed.update(redactor.found(content))
        user["content"] = redactor.text(content)
    if typed:
        said.append(_told("your message", typed))
    if model_text is not None:  # the typed text, then the files' blocks
        blocks = model_text[len(first):] if model_text.startswith(first) else model_text
        attached = redactor.found(blocks)
        model_text = redactor.text(model_text)
        if attached:
            said.append(_told("an @file", set(attached)))
    return model_text, said


def _told(where: str, names: set[str]) -> str:
    shown = ", ".join(sorted(names))
    return (f"{where} held the value of {shown} (or an encoding of it); it was replaced "
            f"by [redacted:NAME] before it was logged or sent")
