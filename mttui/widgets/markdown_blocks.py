"""Markdown rendered block by block, each finished block once.

A streamed answer grows at its end only. Re-rendering the whole Markdown on every
update costs O(length) each time (seconds for a long answer), so the chat fell
behind a fast stream. The text is split at blank lines that start a new top-level
block (outside code fences, next line not indented); each block's lines are cached
by (text, width), so an update renders only the block still being written.
"""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions
from rich.markdown import Markdown
from rich.segment import Segment
from textual.strip import Strip

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

BlockCache = dict[tuple[str, int], list[Strip]]


@cache
def _parser() -> MarkdownIt:
    """The parser rich configures for its Markdown, made once: rich makes one for every
    Markdown, compiling its link patterns each time (~0.5 ms, most of a short block's
    render; a stream re-renders its open block every frame)."""
    return MarkdownIt().enable("strikethrough").enable("table")


class BlockMarkdown(Markdown):
    """rich's Markdown without links (hyperlinks off), parsed by the shared parser.

    Sets what rich's own ``__init__`` sets (``tests/test_stream_render.py`` checks that
    both render alike)."""

    def __init__(self, markup: str) -> None:  # no super().__init__: it makes a parser
        self.markup = markup
        self.parsed = _parser().parse(markup)
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = False
        self.inline_code_lexer = None
        self.inline_code_theme = "monokai"


def split_blocks(text: str) -> list[str]:
    """``text`` cut at blank lines between top-level blocks (never inside a fence, never
    before an indented line, which may continue a list item)."""
    lines = text.split("\n")
    blocks: list[str] = []
    start = 0
    fence: str | None = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is not None or line.strip():
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and not nxt[0].isspace() and i > start:
            block = "\n".join(lines[start:i]).strip("\n")
            if block.strip():
                blocks.append(block)
            start = i + 1
    rest = "\n".join(lines[start:]).strip("\n")
    if rest.strip() or not blocks:
        blocks.append(rest)
    return blocks


def markdown_lines(
    text: str, console: Console, options: ConsoleOptions, cache: BlockCache, *, open_end: bool
) -> list[Strip]:
    """The lines of ``text`` as Markdown; finished blocks come from ``cache``. With
    ``open_end`` the last block is still being written: it is rendered, not cached."""
    blocks = split_blocks(text)
    width = options.max_width
    out: list[Strip] = []
    for i, block in enumerate(blocks):
        last = i == len(blocks) - 1
        key = (block, width)
        lines = cache.get(key)
        if lines is None:
            md = BlockMarkdown(block)
            lines = [Strip(line).simplify()
                     for line in _trimmed(console.render_lines(md, options, pad=False))]
            if not (last and open_end):
                cache[key] = lines
        if out:
            out.append(Strip.blank(0))  # exactly one blank line between blocks
        out.extend(lines)
    return out


def _trimmed(lines: list[list[Segment]]) -> list[list[Segment]]:
    """``lines`` without blank lines at either end."""
    start, end = 0, len(lines)
    while start < end and _blank(lines[start]):
        start += 1
    while end > start and _blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


def _blank(line: list[Segment]) -> bool:
    """No text and no background (a code block's padding rows are kept)."""
    return all(not seg.text.strip() and (seg.style is None or seg.style.bgcolor is None)
               for seg in line)
