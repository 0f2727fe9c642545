"""The offline model: "1 word", the message repeated once (boxed), files written by
``/write`` end with a newline."""

from __future__ import annotations

from mttui.graph.models.offline_text import echo_answer


def test_one_word_and_one_copy() -> None:
    answer = echo_answer("hello", has_tools=True)
    assert "**1 word**" in answer and "1 words" not in answer
    assert answer.count("hello") == 1  # only the boxed copy at the end
    assert "**2 words**" in echo_answer("hello there", has_tools=True)
