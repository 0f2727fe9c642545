"""Choosing the compression cut from the end: the same cut as the forward selection
over the whole history, while reading only the part it keeps (B15: a 100 000-message
history costs what its tail costs)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mttui.graph.compression.cut import choose_cut
from mttui.graph.tokens import estimate_tokens
from tests.support.compression import Counted, conversation, reference_cut

turns = st.lists(
    st.tuples(st.integers(1, 400), st.lists(st.integers(0, 3), min_size=0, max_size=6)),
    min_size=1, max_size=7,
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(turns, st.booleans(), st.integers(0, 2_000))
def test_the_same_cut_as_the_forward_selection(
    spec: list[tuple[int, list[int]]], summary: bool, budget: int
) -> None:
    messages = conversation(spec, summary)
    want = reference_cut(messages, budget)
    got = choose_cut(messages, budget)
    if want is None:
        assert got is None
        return
    assert got is not None
    cut, kept, removed = want
    assert [m.id for m in got.older] == [m.id for m in messages[:cut]]
    assert [m.id for m in got.kept] == [m.id for m in kept]
    assert got.removed == removed


def _loop(steps: int) -> list[Counted]:
    """One request and a long tool loop (the current turn, unfinished), then a
    finished history before it: ``steps`` tool steps of 2 KB outputs."""
    out = [Counted("human", "h0", "read every module")]
    for t in range(steps):
        call = {"id": f"c{t}", "name": "read_file", "args": {"path": f"m{t}.py"}}
        out.append(Counted("ai", f"a{t}", "", tool_calls=[call]))
        out.append(Counted("tool", f"t{t}", "x" * 2048, tool_call_id=f"c{t}"))
    return out


def test_reads_only_the_kept_part() -> None:
    budget = 20_000  # about 38 steps of the loop
    for steps in (200, 20_000):
        messages = _loop(steps)
        Counted.reads = 0
        cut = choose_cut(messages, budget)
        reads = Counted.reads
        assert cut is not None and estimate_tokens(cut.kept) <= budget
        # the kept part and the step before it, never the history before them
        assert reads <= 3 * (len(cut.kept) + 4), (steps, reads, len(cut.kept))
