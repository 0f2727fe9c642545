"""The seed's messages are built without validation yet equal to the validated ones."""

from __future__ import annotations

from typing import Any

import pytest

from mttui.graph.messages import from_record
from mttui.graph.seed import built, view_messages

RECORDS: list[dict[str, Any]] = [
    {"id": "msg-1", "role": "user", "content": "héllo 世界"},
    {"id": "msg-2", "role": "assistant", "content": ""},
    {"id": "msg-3", "role": "system", "content": "note"},
    {"id": "msg-4", "role": "assistant", "content": "x",
     "tool_calls": [{"id": "c1", "name": "read", "args": {"path": "a"}}]},
    {"id": "msg-5", "role": "tool", "content": "ok", "tool_call_id": "c1", "name": "read"},
    {"id": "msg-6", "role": "tool", "content": "no", "tool_call_id": "c1", "name": None,
     "tool_status": "error"},
    {"id": "msg-7", "role": "user", "content": None},
]


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: str(r["id"]))
def test_built_equals_the_validated_message(rec: dict[str, Any]) -> None:
    fast, slow = built(rec), from_record(dict(rec))
    assert type(fast) is type(slow)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()


def test_view_messages_keep_order_and_close_a_call_without_result() -> None:
    view = [RECORDS[0], RECORDS[3], RECORDS[4], RECORDS[1],
            {"id": "msg-8", "role": "assistant", "content": "",
             "tool_calls": [{"id": "c9", "name": "run", "args": {}}]}]
    out = view_messages(None, view)
    assert [m.id for m in out[:4]] == ["msg-1", "msg-4", "msg-5", "msg-2"]
    assert out[5].type == "tool" and out[5].status == "error"


def test_built_messages_share_no_mutable_field() -> None:
    out = view_messages(None, [RECORDS[0], RECORDS[1], {**RECORDS[0], "id": "msg-9"}])
    out[0].additional_kwargs["x"] = 1
    out[1].response_metadata["y"] = 2
    assert out[2].additional_kwargs == {} and out[1].additional_kwargs == {}
    assert out[0].response_metadata == {} and out[2].response_metadata == {}
