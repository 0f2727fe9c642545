"""Choosing where compression cuts reads each message a bounded number of times.

The choice used to estimate the kept part once per candidate point, which is
quadratic in the history (50 s at 8 000 messages). Counting reads of each
message's content is a timing-free way to see the cost grow linearly.
"""

from __future__ import annotations

from mttui.graph.compression.cut import choose_cut
from mttui.graph.tokens import estimate_tokens
from tests.support.compression import Counted


def _history(turns: int) -> list[Counted]:
    out: list[Counted] = []
    for t in range(turns):
        out.append(Counted("human", f"h{t}", f"question {t} " * 5))
        call = {"id": f"c{t}", "name": "read_file", "args": {"path": f"src/m{t}.py"}}
        out.append(Counted("ai", f"a{t}", "", tool_calls=[call]))
        out.append(Counted("tool", f"t{t}", "def f():\n    return 1\n" * 20, tool_call_id=f"c{t}"))
        out.append(Counted("ai", f"r{t}", f"done {t}"))
    return out


def _reads_per_message(turns: int) -> float:
    messages = _history(turns)
    budget = estimate_tokens(messages) // 10
    Counted.reads = 0
    cut = choose_cut(messages, budget)
    assert cut is not None and estimate_tokens(cut.kept) <= budget
    return Counted.reads / len(messages)


def test_reads_per_message_do_not_grow_with_the_history() -> None:
    small, large = _reads_per_message(250), _reads_per_message(2_500)
    assert large <= small * 1.2 + 1, (small, large)
    assert large <= 3, large


def test_the_kept_part_is_the_largest_that_fits() -> None:
    messages = _history(40)
    budget = estimate_tokens(messages) // 3
    cut = choose_cut(messages, budget)
    assert cut is not None
    assert estimate_tokens(cut.kept) <= budget
    # One whole turn more would not fit.
    start = len(messages) - len(cut.kept)
    assert estimate_tokens(messages[start - 4 :]) > budget
