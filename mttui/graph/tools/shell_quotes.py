"""Scanning of bash quotes and expansions whose end is found by counting:
``$'…'`` (with its escapes decoded), backticks, ``$((…))`` and ``${…}``. Each
raises :class:`Unsure` where bash's reading is not followed here."""

from __future__ import annotations

import re

_ARITH = re.compile(r"[A-Za-z0-9_\s+\-*/%<>=!&|^~?:,()]*")
_BRACED = re.compile(r"[^$`\\'\"{}(\n@\[!]+")
_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
              "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class Unsure(Exception):
    """The command is not fully understood (the message says what)."""


def ansi_c(s: str, i: int) -> tuple[str, int]:
    """The value of the ``$'…'`` at ``i`` and the index after it."""
    j, out = i + 2, list[str]()
    while True:
        if j >= len(s):
            raise Unsure("an unclosed $'")
        c = s[j]
        if c == "'":
            return "".join(out), j + 1
        if c == "\\" and j + 1 < len(s):
            nxt = s[j + 1]
            code = re.match(r"x([0-9a-fA-F]{1,2})|([0-7]{1,3})", s[j + 1:j + 4])
            if code:
                out.append(chr(int(code.group(1), 16) if code.group(1)
                               else int(code.group(2), 8)))
                j += 1 + len(code.group(0))
                continue
            if nxt in "uUc":
                raise Unsure("a $'…' escape not followed here")
            out.append(_C_ESCAPES.get(nxt, "\\" + nxt))
            j += 2
            continue
        out.append(c)
        j += 1


def backtick(s: str, i: int) -> tuple[str, int]:
    """The command inside the backticks at ``i`` (its backslashes undone) and the
    index after the closing one."""
    j, body = i + 1, list[str]()
    while True:
        if j >= len(s):
            raise Unsure("an unclosed `")
        c = s[j]
        if c == "`":
            return "".join(body), j + 1
        if c == "\\" and j + 1 < len(s):
            nxt = s[j + 1]
            body.append(nxt if nxt in "$`\\" else "\\" + nxt)
            j += 2
            continue
        body.append(c)
        j += 1


def arithmetic(s: str, i: int) -> int:
    """The index after the ``$((…))`` at ``i``: only numbers, names and operators
    (no quotes, subscripts or substitutions, which could run a command)."""
    depth, j = 0, i + 1
    while j < len(s):
        depth += {"(": 1, ")": -1}.get(s[j], 0)
        if depth == 0:
            break
        j += 1
    if j >= len(s) or s[j - 1] != ")" or not _ARITH.fullmatch(s[i + 3:j - 1]):
        raise Unsure("an arithmetic expansion not followed here")
    return j + 1


def braced(s: str, i: int) -> int:
    """The index after the ``${…}`` at ``i``: a name with plain operators only
    (``${x:-$(…)}``, ``${x@P}`` or ``${!x}`` could run a command)."""
    j = s.find("}", i)
    if j < 0 or not _BRACED.fullmatch(s[i + 2:j]):
        raise Unsure("a ${…} expansion not followed here")
    return j + 1
