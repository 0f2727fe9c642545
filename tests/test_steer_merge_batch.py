"""Found by the stateful test: a batch of more than two Steers reached the model as
pairs ("a\\n\\nb", "c\\n\\nd") instead of one user message (pending.md, steer merge)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from mttui.graph.pending_node import merge_user_turns, steer_message


def test_a_batch_of_four_steers_is_one_user_message() -> None:
    steers = [steer_message({"id": f"m{i}", "content": f"s{i}"}) for i in range(4)]
    sent = merge_user_turns([HumanMessage(content="go", id="u"), AIMessage(content="ok"),
                             *steers])
    assert [m.content for m in sent] == ["go", "ok", "s0\n\ns1\n\ns2\n\ns3"]
    assert sent[-1].id == "m0"
