"""The list preview of a long message is read from its start only, and is the same as
flattening the whole text would give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mttui.session.index.apply import PREVIEW_CHARS, preview_of

CHUNKS = st.one_of(st.text(alphabet="ab快é", min_size=1, max_size=40),
                   st.text(alphabet=" \n\t", min_size=1, max_size=400))


def _whole(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


@settings(max_examples=300, deadline=None)
@given(st.lists(CHUNKS, max_size=60))
def test_preview_of_a_long_text_is_that_of_the_whole(chunks: list[str]) -> None:
    text = "".join(chunks)
    assert preview_of(text, None) == _whole(text)


def test_a_tool_output_of_megabytes() -> None:
    text = "def f(x):\n    return x\n" * 100_000
    assert preview_of(text, None) == _whole(text)
    assert preview_of("   \n" * 10_000 + "late words", None) == "late words"
