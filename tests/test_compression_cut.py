"""Where compression cuts, over generated conversations (hypothesis): never inside a
tool exchange, never a tool message first, the latest request always kept, the
kept part within the budget whenever a cut allows it, pieces that pair up."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from mttui.graph.compression.cut import choose_cut, chunks, is_request, safe_points
from mttui.graph.messages import assert_paired
from mttui.graph.tokens import estimate_tokens
from tests.support.compression import conversation

# a conversation: turns of (request size, [steps: number of parallel calls, 0 = answer])
turns = st.lists(
    st.tuples(st.integers(1, 400), st.lists(st.integers(0, 3), min_size=0, max_size=6)),
    min_size=1, max_size=6,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(turns, st.booleans(), st.integers(0, 600))
def test_cuts_are_safe(spec: list[tuple[int, list[int]]], summary: bool, budget: int) -> None:
    messages = conversation(spec, summary)
    cut = choose_cut(messages, budget)
    last = [m for m in messages if is_request(m)][-1]
    if cut is None:
        return
    kept, older = cut.kept, cut.older
    assert kept and kept[0].type != "tool"
    assert any(m is last for m in kept), "the latest request must be kept"
    lifted = any(m is last for m in older)
    assert kept[0] is last or not lifted, "a lifted request comes first in the kept part"
    assert_paired(kept)  # no call without its result, no result without its call
    assert_paired(older)
    assert cut.removed == sum(1 for m in older if m.id != "summary-0" and m is not last)
    assert cut.removed > 0
    # whole messages only, in order: older then kept (minus a lifted request) is everything
    rest = kept[1:] if lifted else kept
    assert older + rest == messages
    # the largest part that fits: one more safe point earlier would not fit
    if estimate_tokens(kept) <= budget:
        start = len(older)
        earlier = [p for p in safe_points(messages) if p < start and is_request(messages[p])]
        if earlier:
            assert estimate_tokens(messages[earlier[-1]:]) > budget


@settings(max_examples=200, deadline=None)
@given(turns, st.integers(60, 500))
def test_pieces_pair_up_and_keep_the_order(spec: list[tuple[int, list[int]]], size: int) -> None:
    messages = conversation(spec, True)
    pieces = chunks(messages, size)
    assert [m.id for p in pieces for m in p] == [m.id for m in messages]
    for piece in pieces:
        assert piece[0].type != "tool"
        assert_paired(piece)


def test_a_huge_message_is_clipped_for_the_summary_only() -> None:
    call = {"id": "c1", "name": "write_file", "args": {"path": "a.txt", "content": "z" * 40_000}}
    ai = AIMessage("", id="a1", tool_calls=[call])
    tool = ToolMessage("o" * 40_000, tool_call_id="c1", id="t1")
    pieces = chunks([HumanMessage("go", id="u1"), ai, tool], 1_000)
    sent = [m for p in pieces for m in p]
    assert [m.id for m in sent] == ["u1", "a1", "t1"]
    assert all(estimate_tokens([m]) <= 1_000 for m in sent)
    assert sent[1].tool_calls[0]["args"]["path"] == "a.txt"
    assert "characters omitted" in sent[1].tool_calls[0]["args"]["content"]
    assert "characters omitted" in sent[2].content
    assert len(ai.tool_calls[0]["args"]["content"]) == 40_000  # the original is untouched
    assert len(tool.content) == 40_000
