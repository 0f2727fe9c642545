"""/clear and rewind together: the model's view folded from the records.

A rewind to a message before a ``session_clear`` puts back the view as it stood
then (the clear is no longer in force); its undo brings the cleared view back.
"""

from __future__ import annotations

from typing import Any

from mttui.session.transcript import fold


def _msg(i: int, role: str = "user") -> dict[str, Any]:
    return {"type": "transcript_message",
            "message": {"id": f"m{i}", "role": role, "content": f"text {i}", "status": "sent"}}


def _ids(records: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("id")) for m in fold(records).model_view()[1]]


def test_clear_hides_everything_before_it() -> None:
    records = [_msg(1), _msg(2, "assistant"), {"type": "session_clear"}, _msg(3)]
    assert _ids(records) == ["m3"]


def test_rewind_to_before_a_clear_brings_the_earlier_view_back() -> None:
    records = [_msg(1), _msg(2, "assistant"), _msg(3), _msg(4, "assistant"),
               {"type": "session_clear"}, _msg(5), _msg(6, "assistant"),
               {"type": "rewind", "to_message_id": "m3"}]
    assert _ids(records) == ["m1", "m2"]
    # the undo: the cleared view (after the clear) is back
    assert _ids([*records, {"type": "rewind", "undo": True}]) == ["m5", "m6"]


def test_rewind_after_a_clear_stays_after_it() -> None:
    records = [_msg(1), {"type": "session_clear"}, _msg(2), _msg(3, "assistant"), _msg(4),
               {"type": "rewind", "to_message_id": "m4"}]
    assert _ids(records) == ["m2", "m3"]


def test_every_record_type_of_the_contract_is_known() -> None:
    """A known type is checked and folded; an unknown one is only counted (doctor warns)."""
    from mttui.session.records import KNOWN_TYPES

    contract = {
        "session_start", "transcript_message", "message_update", "run_start", "run_end",
        "approval_request", "approval_decision", "grant_revoked", "tool_dispatch",
        "tool_outcome", "compression", "session_update", "session_resumed", "session_end",
        "session_clear", "file_checkpoint", "rewind", "rewind_start", "rewind_end",
        "tool_resolution", "pending_add", "pending_edit", "pending_move", "pending_remove",
        "pending_take", "pending_read", "pending_fail", "pending_steer",
    }  # fmt: skip
    assert contract - set(KNOWN_TYPES) == set()
