"""Render history items to lines (Textual ``Strip``s) at a given width.

Safe to call from a worker thread: it uses its own Rich console, never the app's.
All model and tool text goes through :func:`literal` first, and is wrapped in
``Text``/``Markdown`` objects, never parsed as markup.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.strip import Strip

from ..graph.compression.prompt import snapshot_markdown
from .clip import clipped
from .glyphs import ascii_only, glyph
from .history_items import Item
from .history_ledger import can_settle, ledger_line
from .history_rewound import header_text, is_hidden
from .markdown_blocks import BlockMarkdown, markdown_lines
from .text import full_args, literal, short_args, tokens
from .tool_live import TAIL_EXPANDED, live_tail, running_label

STATUS_ICON = {
    "success": "✓",
    "error": "✗",
    "denied": "⊘",
    "cancelled": "⊘",
    "interrupted": "⚠",
    "open": "…",
    "running": "⟳",
    "awaiting": "⏸",
}

GLYPH_OF = {"running": "spin", "awaiting": "pause", "interrupted": "warn", "error": "fail"}


def status_icon(status: str) -> str:
    """A tool status's icon (ASCII when the terminal lacks the glyph, see ``glyphs``)."""
    name = GLYPH_OF.get(status)
    return glyph(name) if name is not None and ascii_only() else STATUS_ICON.get(status, "·")


@dataclass(frozen=True)
class Palette:
    """Rich styles for history items, resolved from the theme by the view."""

    user: Style = Style(bold=True, color="cyan")
    assistant: Style = Style(bold=True, color="magenta")
    tool: Style = Style(bold=True, color="blue")
    dim: Style = Style(dim=True)
    ok: Style = Style(color="green")
    error: Style = Style(color="red")
    warning: Style = Style(color="yellow")
    rule: Style = Style(dim=True)

    @classmethod
    def resolve(cls, get: Callable[[str], Style]) -> Palette:
        """The palette from the view's component styles (``history--user`` …)."""
        return cls(user=get("user"), assistant=get("assistant"), tool=get("tool"),
                   dim=get("dim"), ok=get("ok"), error=get("error"), warning=get("warning"),
                   rule=get("dim"))


def make_console(width: int) -> Console:
    return Console(
        file=io.StringIO(), width=max(width, 10), color_system="truecolor", force_terminal=True,
        legacy_windows=False, markup=False, emoji=False, highlight=False, soft_wrap=False,
    )


def render_item(item: Item, width: int, pal: Palette, console: Console | None = None) -> None:
    """Fill ``item.lines`` (body lines then one blank separator) for ``width``."""
    if is_hidden(item):  # in a collapsed rewound branch
        item.lines, item.body, item.width = [], 0, width
        return
    console = console or make_console(width)
    options = console.options.update(width=max(width, 10), height=None, highlight=False)
    shown, note = clipped(item.text)  # a huge message is drawn clipped, with a note
    body = literal(shown)
    if item.kind == "assistant" and body.strip():
        # block by block, finished blocks from the item's cache: a growing answer
        # re-renders only its last block (see markdown_blocks)
        head = console.render_lines(assistant_head(item, pal), options, pad=False)
        strips = [Strip(line).simplify() for line in head]
        strips += markdown_lines(body, console, options, item.blocks, open_end=item.streaming)
        if note:
            strips += [Strip(line).simplify()
                       for line in console.render_lines(Text(note, style=pal.warning), options,
                                                        pad=False)]  # fmt: skip
    else:
        lines = console.render_lines(renderable(item, pal, width), options, pad=False)
        strips = [Strip(line).simplify() for line in lines]
    if not item.streaming:
        item.blocks.clear()  # needed while an answer grows; a finished one is drawn whole
    item.lines = [*strips, Strip.blank(0)]
    item.body = len(strips)
    item.width = width


def assistant_head(item: Item, pal: Palette) -> Text:
    head = Text("Assistant", style=pal.assistant)
    if item.streaming:
        head.append("  ⟳ streaming", style=pal.dim)
    elif item.status == "interrupted":
        head.append("  ⚠ interrupted", style=pal.warning)
    elif item.status == "error":
        head.append("  ✗ error", style=pal.error)
    return head


def renderable(item: Item, pal: Palette, width: int) -> RenderableType:
    kind = item.kind
    if kind == "user":
        head = Text("You", style=pal.user)
        if item.status not in ("", "sent"):
            head.append(f"  · {item.status}", style=pal.warning)
        shown, note = clipped(item.text)
        return Group(head, Text(literal(shown)), *_note(note, pal))
    if kind == "assistant":  # (a non-empty body is rendered by render_item, in blocks)
        return Group(assistant_head(item, pal), Text("…", style=pal.dim))
    if kind == "tool":
        return tool_block(item, pal, width)
    if kind == "compression":
        return compression_block(item, pal)
    if kind == "warnings":
        return warnings_block(item, pal)
    if kind == "cleared":
        from rich.rule import Rule

        return Rule(literal(item.text), style=pal.warning, characters="━")
    if kind == "rewound":
        return Text(header_text(item), style=pal.warning)
    if kind == "notice":
        style = {"error": pal.error, "warning": pal.warning}.get(item.status, pal.dim)
        icon = {"error": "✗", "warning": "⚠"}.get(item.status, "·")
        return Text(f"{icon} {literal(item.text)}", style=style)
    return Text(literal(item.text), style=pal.dim)


def _note(note: str, pal: Palette) -> list[RenderableType]:
    return [Text(note, style=pal.warning)] if note else []


def status_style(status: str, pal: Palette) -> Style:
    if status == "success":
        return pal.ok
    if status in ("error",):
        return pal.error
    if status in ("interrupted", "denied", "cancelled", "awaiting"):
        return pal.warning
    return pal.dim


def tool_block(item: Item, pal: Palette, width: int) -> RenderableType:
    status = item.status or "open"
    right = Text(f"{status_icon(status)} {status}", style=status_style(status, pal))
    live = status == "running" and "started" in item.data
    if live:
        right = running_label(item)
    head = Text("▾ " if item.expanded else "▸ ", style=pal.dim)
    head.append(literal(item.tool or "tool"), style=pal.tool)
    if item.args is not None:
        room = max(width - len(head) - len(right) - 4, 8)
        head.append("  " + short_args(item.tool, item.args, room), style=pal.dim)
    head.truncate(max(width - len(right) - 2, 8), overflow="ellipsis")
    head.pad_right(max(width - len(head) - len(right), 1))
    head.append_text(right)
    if live and not item.expanded:
        return Group(head, live_tail(item, pal.dim))
    if not item.expanded:
        return head
    parts: list[RenderableType] = [head]
    if item.args is not None:
        parts.append(Text("arguments", style=pal.dim))
        parts.append(Padding(Text(literal(full_args(item.args))), (0, 0, 0, 2)))
    parts.append(Text("output", style=pal.dim))
    if item.output is None and live:
        parts.append(live_tail(item, pal.dim, TAIL_EXPANDED))
    elif item.output is None:
        parts.append(Padding(Text("(no result yet)", style=pal.dim), (0, 0, 0, 2)))
    else:
        parts.append(Padding(Text(literal(item.output) or "(empty)"), (0, 0, 0, 2)))
    if status == "interrupted":  # the tool ledger (timetravel.md)
        parts.append(Text(ledger_line(item), style=pal.warning if can_settle(item)
                          else pal.dim))
    return Padding(Group(*parts), (0, 0, 0, 0))


def compression_block(item: Item, pal: Palette) -> RenderableType:
    d = item.data
    head = Text("▾ " if item.expanded else "▸ ", style=pal.dim)
    head.append("◆ ", style=pal.warning)
    head.append(f"compressed {d.get('removed_count', 0)} messages — "
                f"{tokens(int(d.get('tokens_before') or 0))} → "
                f"{tokens(int(d.get('tokens_after') or 0))} tokens")
    if d.get("trigger"):
        head.append(f"  · {d['trigger']}", style=pal.dim)
    if not item.expanded:
        return head
    summary = snapshot_markdown(literal(item.text)) or "(no summary)"
    return Group(head, Padding(BlockMarkdown(summary), (0, 0, 0, 2)))


def warnings_block(item: Item, pal: Palette) -> RenderableType:
    warnings = item.data.get("warnings") or []
    mode = item.data.get("mode") or ""
    head = Text("⚠ ", style=pal.warning)
    head.append(f"Resumed{f' ({mode})' if mode else ''}", style=pal.warning + Style(bold=True))
    head.append(f" — {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
                if warnings else " — no warnings", style=pal.dim)
    if not warnings:
        return head
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, style=pal.warning)
    grid.add_column(ratio=1)
    for w in warnings:
        grid.add_row("  •", str(w.get("code", "")), literal(str(w.get("message", ""))))
    return Group(head, grid)


def edge_text(which: str, *, fetching: bool, has_more: bool, empty: bool) -> str:
    """The history's first line (``start``) or, when newer pages are not loaded, its
    last one (``end``)."""
    if which == "end":
        return "↓ newer messages below · end jumps to the newest"
    if fetching and has_more:
        return "⟳ loading older messages…"
    if has_more:
        return "↑ older messages load as you scroll · home jumps to the start"
    return "(no messages yet)" if empty else "── start of the session ──"
