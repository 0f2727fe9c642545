"""A huge message is shown clipped in the chat, with a note saying how to see all of it."""

from __future__ import annotations

from mttui.widgets.clip import SHOWN, clipped
from mttui.widgets.history_items import Item
from mttui.widgets.history_render import Palette, render_item


def test_short_text_is_untouched() -> None:
    assert clipped("hello\nworld") == ("hello\nworld", "")


def test_long_text_is_cut_at_a_line_end_with_a_note() -> None:
    text = ("line of text\n" * 10_000) + "z" * 1000
    shown, note = clipped(text)
    assert len(shown) <= SHOWN and shown.endswith("line of text")
    assert f"{len(text) - len(shown):,} more characters" in note
    assert "mttui export" in note


def test_a_huge_assistant_message_renders_as_a_bounded_number_of_lines() -> None:
    for kind in ("assistant", "user"):
        item = Item(kind=kind, key="m", seq=1, text="x" * 5_000_000, status="sent")  # type: ignore[arg-type]
        render_item(item, 100, Palette())
        assert item.lines is not None and item.body < 2 * SHOWN // 100 + 10
        rendered = "".join(s.text for s in item.lines)
        assert "4,980,000 more characters not shown" in rendered
