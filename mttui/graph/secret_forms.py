"""The spellings of a secret that redaction looks for, computed once per set of secrets.

Besides the value itself: its reverse (``rev``), its hex (lower and upper case:
``xxd -p``, ``od -An -tx1``), and its base64 in the standard and the URL-safe
alphabet (``base64``, ``basenc --base64url``) at each of the three alignments a
value can have inside a longer encoded text. Each of these reversed too
(``base64 | rev``). The characters of a form may be separated by a little
whitespace (:data:`GAP`): encoders wrap lines (``base64`` at 76 columns, ``xxd -p``
at 60) and ``od`` puts spaces between bytes.

A base64 form is the part of the encoding that depends on the value alone:
encode the value after 0, 1 or 2 filler bytes and keep the characters whose six
bits all come from the value (the first and last one or two mix in the
neighbouring bytes, so they are not part of it; they give away at most a few bits).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

GAP = r"\s{0,4}"  # whitespace allowed between two characters of a form
MAX_GAP = 4
_SKIP = (0, 2, 3)  # characters of the encoding that still hold filler bits, by alignment
_URLSAFE = str.maketrans("+/", "-_")


def forms(value: str) -> set[str]:
    """The spellings of ``value`` to redact (the value itself included)."""
    raw = value.encode("utf-8", errors="surrogatepass")
    out = {value, raw.hex(), raw.hex().upper()}
    for filler in range(3):
        encoded = base64.b64encode(b"\0" * filler + raw).decode("ascii")
        stable = encoded[_SKIP[filler] : (8 * (filler + len(raw))) // 6]
        if stable:
            out.update((stable, stable.translate(_URLSAFE)))
    out.update([f[::-1] for f in out])
    return out


def pattern(spellings: Iterable[str]) -> re.Pattern[str] | None:
    """One regex for all ``spellings``, the longest first, whitespace allowed between
    characters."""
    ordered = sorted(set(spellings), key=lambda s: (-len(s), s))
    if not ordered:
        return None
    return re.compile("|".join(GAP.join(map(re.escape, s)) for s in ordered))


def prefixes(spellings: Iterable[str]) -> frozenset[str]:
    """Every proper, non-empty beginning of every spelling (for streamed text)."""
    return frozenset(s[:i] for s in spellings for i in range(1, len(s)))
