"""A side table of CJK character pairs, so a 2-character CJK query uses an index.

The FTS table's trigrams cannot serve a query shorter than 3 characters, and a
2-character word is the common case in Chinese: it used to fall back to a scan of
every message (25× the baseline instead of ≥ 100×). ``cjk_grams`` holds, for each
message, the distinct pairs of adjacent CJK characters in its text, each packed
into one integer. It is kept where the FTS rows are kept (insert, text update,
session removal) and rebuilt with them by ``reindex``; a candidate is still
confirmed with ``instr`` on the text, like every search candidate.
"""

from __future__ import annotations

import re
import sqlite3
from array import array
from collections.abc import Iterable
from functools import cache

# Hiragana, Katakana, CJK extension A, unified ideographs, Hangul syllables, compatibility
_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
           (0xF900, 0xFAFF))  # fmt: skip
_CHARS = "".join(f"{chr(a)}-{chr(b)}" for a, b in _RANGES)
_I4 = array("I").itemsize == 4  # code points are read as 4-byte integers


@cache
def _runs() -> re.Pattern[str]:
    """Runs of 2+ CJK characters, spelt so that the regex engine skips to a first CJK
    character in C (``{2,}`` makes it try every position in turn: 2-3× slower on long
    tool output). Compiled on first use: ~8 ms that a fresh `mttui search` or start of
    the TUI would otherwise pay for ASCII-only work."""
    return re.compile(f"[{_CHARS}][{_CHARS}]+")


def is_cjk(char: str) -> bool:
    code = ord(char)
    return any(a <= code <= b for a, b in _RANGES)

SCHEMA = """
CREATE TABLE IF NOT EXISTS cjk_grams (
    gram INTEGER NOT NULL,
    rid INTEGER NOT NULL,
    PRIMARY KEY (gram, rid)
) WITHOUT ROWID
"""


def pack(pair: str) -> int:
    return (ord(pair[0]) << 21) | ord(pair[1])


def grams(text: str) -> set[int]:
    """The distinct adjacent CJK pairs of ``text``, packed."""
    if text.isascii():  # most text, source code above all: no scan at all
        return set()
    runs = _runs().findall(text)
    if not runs:
        return set()
    # The code points of every run, runs apart by a 0 (no pair spans two runs).
    joined = "\0".join(runs)
    codes = array("I", joined.encode("utf-32-le")) if _I4 else list(map(ord, joined))
    return {a << 21 | b for a, b in zip(codes, codes[1:], strict=False) if a and b}


def is_pair(token: str) -> bool:
    """A 2-character query token both of whose characters are CJK."""
    return len(token) == 2 and is_cjk(token[0]) and is_cjk(token[1])


def add(conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Index the pairs of ``(rid, text)`` rows."""
    conn.executemany(
        "INSERT OR IGNORE INTO cjk_grams (gram, rid) VALUES (?, ?)",
        ((g, rid) for rid, text in rows for g in grams(text)),
    )


def remove(conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Drop the pairs of ``(rid, old text)`` rows."""
    conn.executemany(
        "DELETE FROM cjk_grams WHERE gram = ? AND rid = ?",
        ((g, rid) for rid, text in rows for g in grams(text)),
    )


def add_where(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    """Index the messages matching ``where``.

    Python tells CJK text apart faster than a ``GLOB`` with a character class
    (seconds on a few tens of MB of tool output), so every row is read.
    """
    add(conn, conn.execute(f"SELECT rid, text FROM messages WHERE {where}", args))


def remove_where(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    remove(conn, conn.execute(f"SELECT rid, text FROM messages WHERE {where}", args).fetchall())


def rebuild(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM cjk_grams")
    add_where(conn, "1", ())


def migrate(conn: sqlite3.Connection) -> None:
    """Schema v6: the table, filled from the messages already indexed."""
    conn.execute(SCHEMA)
    rebuild(conn)
