"""Turning any user text into a safe FTS5 query, and scoring/snippeting candidates.

The FTS table uses the trigram tokenizer with ``detail=none`` (no positions,
about a third of the size). A query token of 3+ characters is therefore matched
as an AND of its own trigrams (``search`` asks each shard for the rarest ones),
each one double-quoted (quotes doubled) so no
user text is ever parsed as FTS syntax; candidates are then confirmed with
``instr`` on the stored text. Only the trigrams inside one of a token's
``pieces`` are asked for: the shards index a text's pieces, never a trigram
across a cut (``shards.fts_text``). Tokens with no such trigram (shorter than 3
characters, e.g. two CJK characters, or ``a+b``) are matched with ``instr`` only.
Matching is case-insensitive for ASCII letters.
"""

from __future__ import annotations

import re
import string

from ..models import SNIPPET_END, SNIPPET_START
from ..plain import Plain

# Bounds that keep hostile input (10 000 characters, thousands of words) cheap and
# inside SQLite's limits; tokens beyond them are still checked, in Python.
MAX_SQL_TOKENS = 8
MAX_TRIGRAMS_PER_TOKEN = 12
SNIPPET_BEFORE = 40
SNIPPET_WIDTH = 140

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_SPACE = re.compile(r"\s+")

# Where text is cut into pieces for the FTS shards: ASCII whitespace and ASCII
# punctuation but "_" and "." (identifiers, dotted names and version numbers stay
# whole). Code repeats its pieces far more than its words ("x = f(a, b)" and
# "y = f(b)"): the shards are given a third fewer trigrams.
_PUNCTUATION = string.punctuation.replace("_", "").replace(".", "").encode()
_CUT = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only, exactly like SQLite's ``lower()`` (length-preserving)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


class ParsedQuery(Plain):
    tokens: list[str]  # every distinct token, ASCII-lower-cased
    long: list[str]  # tokens of >= 3 characters (FTS asked for their trigrams), <= MAX_SQL_TOKENS
    short: list[str]  # tokens matched with instr only, at most MAX_SQL_TOKENS
    unchecked: list[str]  # tokens over the SQL bounds, confirmed in Python


def parse_query(query: str) -> ParsedQuery:
    """Split on whitespace, drop what SQLite cannot bind (NUL, lone surrogates)."""
    clean = query.replace("\x00", " ").encode("utf-8", "ignore").decode("utf-8")
    tokens: list[str] = []
    # Split at whitespace: the shards cut a text at (ASCII) whitespace too, so each of a
    # token's pieces lies inside one of the pieces they index (shards.fts_text).
    for tok in ascii_lower(clean).split():
        if tok and tok not in tokens:
            tokens.append(tok)
    # The longest tokens are the most selective: they go to SQL first.
    ranked = sorted(tokens, key=len, reverse=True)
    long = [t for t in ranked if len(t) >= 3][:MAX_SQL_TOKENS]
    short = [t for t in ranked if len(t) < 3][:MAX_SQL_TOKENS]
    unchecked = [t for t in tokens if t not in long and t not in short]
    return ParsedQuery(tokens, long, short, unchecked)


def quote(text: str) -> str:
    """One FTS5 string: double-quoted, inner double quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def pieces(text: str) -> list[bytes]:
    """``text`` cut at ASCII whitespace and punctuation but ``_.``, UTF-8 encoded.

    Only ASCII bytes are cut, so a piece is always whole characters; a token of a
    query (``parse_query``: no whitespace of any kind) therefore has pieces that
    each lie inside one piece of any text that contains it."""
    return text.encode("utf-8", "surrogatepass").translate(_CUT).split()


def trigrams(token: str) -> list[str]:
    """Distinct trigrams inside the ``pieces`` of ``token``, evenly thinned to a
    bounded number; none when no piece has 3 characters.

    Any subset is correct (``instr`` confirms every candidate); more is just
    more selective.
    """
    words = [piece.decode("utf-8", "surrogatepass") for piece in pieces(token)]
    grams = list(dict.fromkeys(w[i : i + 3] for w in words for i in range(len(w) - 2)))
    if len(grams) <= MAX_TRIGRAMS_PER_TOKEN:
        return grams
    step = (len(grams) - 1) / (MAX_TRIGRAMS_PER_TOKEN - 1)
    return list(dict.fromkeys(grams[round(i * step)] for i in range(MAX_TRIGRAMS_PER_TOKEN)))


def matches_all(text: str, tokens: list[str]) -> bool:
    low = ascii_lower(text)
    return all(t in low for t in tokens)


class Needles(Plain):
    """The tokens as ``score`` looks for them, prepared once per search, not per text."""

    fold: bool  # a text must be case-folded (a token has an ASCII letter)
    encoded: list[bytes]  # the tokens in UTF-8, looked for in a folded text's bytes
    plain: list[str]  # the tokens, looked for in a text as it is (when not folding)


def needles(tokens: list[str]) -> Needles:
    fold = any(c in string.ascii_lowercase for tok in tokens for c in tok)
    encoded = [tok.encode("utf-8", "surrogatepass") for tok in tokens] if fold else []
    return Needles(fold, encoded, tokens)


def score(text: str, needles: Needles, avg_len: float) -> float:
    """BM25-like: saturating term frequency, normalised by length; higher is better."""
    norm = 1.2 * (0.25 + 0.75 * len(text) / max(avg_len, 1.0))
    total = 0.0
    if needles.fold:  # bytes.lower() folds ASCII only, like SQLite, and beats translate()
        low = text.encode("utf-8", "surrogatepass").lower()
        for tok in needles.encoded:
            tf = low.count(tok)
            total += tf / (tf + norm) if tf else 0.0
    else:  # nothing to fold (CJK, digits): counted in the text itself, nothing encoded
        for word in needles.plain:
            tf = text.count(word)
            total += tf / (tf + norm) if tf else 0.0
    return total


def snippet(text: str, tokens: list[str], *, fold: bool = True) -> str:
    """A one-line excerpt around the first match, every match marked ⟦…⟧; ``fold``
    False when no token has an ASCII letter (the text then needs no lower-casing)."""
    low = ascii_lower(text) if fold else text
    hits = [p for p in (low.find(t) for t in tokens) if p >= 0]
    first = min(hits) if hits else 0
    start = max(0, first - SNIPPET_BEFORE)
    if start:
        space = text.rfind(" ", start - 15, start + 1)  # prefer starting on a word
        start = space + 1 if space > 0 else start
    end = min(len(text), start + SNIPPET_WIDTH)
    spans: list[tuple[int, int]] = []
    window = low[start:end]
    for tok in tokens:
        pos = window.find(tok)
        while pos >= 0:
            spans.append((pos, min(pos + len(tok), len(window))))
            pos = window.find(tok, pos + len(tok))
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    piece = text[start:end]
    out, last = [], 0
    for a, b in merged:
        out += [piece[last:a], SNIPPET_START, piece[a:b], SNIPPET_END]
        last = b
    out.append(piece[last:])
    body = _SPACE.sub(" ", "".join(out)).strip()
    return ("…" if start else "") + body + ("…" if end < len(text) else "")
