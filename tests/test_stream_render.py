"""A streamed answer is drawn block by block, and streamed text reaches the UI in
batches: the cost of one update does not grow with the answer, and the UI's queue
holds at most one wake-up however fast tokens come."""

from __future__ import annotations

from mttui.graph.events import TextDelta
from mttui.widgets.delta_buffer import DeltaBuffer
from mttui.widgets.history_items import Item
from mttui.widgets.history_render import Palette, make_console, render_item
from mttui.widgets.markdown_blocks import split_blocks

ANSWER = "\n\n".join(
    f"## Step {i}\n\nThe parser reads `tok_{i}`:\n\n```python\ndef f{i}(x):\n\n"
    f"    return x + {i}\n```\n\n- one {i}\n- two\n\n修复日志 {i} done."
    for i in range(30)
)


def test_blocks_never_split_a_fence_or_an_indented_continuation() -> None:
    text = "intro\n\n```\na\n\nb\n```\n\n- item\n\n    more of the item\n\nend"
    assert split_blocks(text) == ["intro", "```\na\n\nb\n```", "- item\n\n    more of the item",
                                  "end"]


def _text(item: Item) -> list[str]:
    return [line.text.rstrip() for line in item.lines or []]


def test_a_growing_answer_renders_only_its_last_block() -> None:
    width, pal = 80, Palette()
    console = make_console(width)
    item = Item("assistant", "s-1", 1, streaming=True)
    blocks = split_blocks(ANSWER)
    for end in [*range(40, len(ANSWER), 97), len(ANSWER) - 3]:
        item.text = ANSWER[:end]
        render_item(item, width, pal, console)
        # every finished block is cached; the open one is not
        assert len(item.blocks) <= len(split_blocks(item.text)) - 1
    cached = set(item.blocks)
    item.text, item.streaming = ANSWER, False
    render_item(item, width, pal, console)
    # at the end of the stream every block but the last (still open) was drawn once
    assert {b for b, _ in cached} == set(blocks[:-1])
    streamed = _text(item)
    # the same answer drawn in one go (no cache) looks the same
    fresh = Item("assistant", "m-1", 1, text=ANSWER)
    render_item(fresh, width, pal, make_console(width))
    assert _text(fresh) == streamed
    assert any("修复日志 29 done." in line for line in streamed)
    assert not item.blocks  # a finished answer keeps no block cache


def test_one_wake_up_however_many_tokens() -> None:
    wakes: list[int] = []
    buf = DeltaBuffer(lambda: wakes.append(1))
    for i in range(1000):
        buf.add(TextDelta("m1", f"{i} "))
    buf.add(TextDelta("m2", "x"))
    assert len(wakes) == 1
    drained = buf.drain()
    assert [d.message_id for d in drained] == ["m1", "m2"]
    assert drained[0].text == "".join(f"{i} " for i in range(1000))
    buf.add(TextDelta("m2", "y"))
    assert len(wakes) == 2 and buf.drain() == [TextDelta("m2", "y")]


SAMPLES = [
    ANSWER,
    "| a | b |\n|---|---|\n| ~~old~~ | **new** |",
    "1. first\n2. second with [a link](https://example.com) and https://example.org\n\n> quoted",
    "# Title\n\n```\nplain fence\n```\n\n---\n\n*em* `code` 修复",
    "",
]


def test_the_shared_parser_renders_as_richs_own_markdown() -> None:
    """BlockMarkdown sets what rich's Markdown sets, with one parser for every block."""
    from rich.markdown import Markdown

    from mttui.widgets.markdown_blocks import BlockMarkdown

    console = make_console(72)
    for sample in SAMPLES:
        ours = console.render_lines(BlockMarkdown(sample), pad=False)
        richs = console.render_lines(Markdown(sample, hyperlinks=False), pad=False)
        assert ours == richs, sample
    assert BlockMarkdown("x").parsed is not None
