"""Found by the stateful test: a compression cut inside a batch of Steers left the model
half of a message it had been sent as one (K3 summarised, K4…K7 kept)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from mttui.graph.compression.cut import safe_points
from mttui.graph.pending_node import steer_message


def test_no_cut_point_inside_a_batch_of_steers() -> None:
    steers = [steer_message({"id": f"s{i}", "content": f"K{i}"}) for i in range(3, 8)]
    messages = [HumanMessage(content="K1", id="u1"), AIMessage(content="re K1", id="a1"),
                HumanMessage(content="K2", id="u2"),
                AIMessage(content="", id="a2", tool_calls=[{"id": "c2", "name": "shell",
                                                             "args": {}}]),
                ToolMessage(content="ok", tool_call_id="c2", id="t2"), *steers,
                AIMessage(content="re K3", id="a3")]
    points = safe_points(messages)
    first = messages.index(steers[0])
    assert first in points
    assert not any(first < p <= first + 4 for p in points)


def test_the_chosen_cut_keeps_a_batch_of_steers_whole() -> None:
    from mttui.graph.compression.cut import choose_cut

    steers = [steer_message({"id": f"s{i}", "content": f"K{i} " + "x" * 400})
              for i in range(3, 8)]
    messages = [HumanMessage(content="K1 " + "y" * 4000, id="u1"),
                AIMessage(content="re K1 " + "y" * 4000, id="a1"), *steers,
                AIMessage(content="re K3", id="a3"), HumanMessage(content="K8", id="u8")]
    for budget in range(50, 2000, 50):
        cut = choose_cut(messages, budget)
        if cut is None:
            continue
        steer_ids = [m.id for m in cut.kept if m.id and m.id.startswith("s")]
        assert steer_ids in ([], [s.id for s in steers]), (budget, steer_ids)
