"""Export: Markdown for people, JSONL of the readable records for tools."""

from __future__ import annotations

import json

import pytest

from mttui.session.errors import MttuiError
from mttui.session.service import SessionService
from tests.support.logs import message, new_session


def _session(svc: SessionService) -> str:
    calls = [{"id": "call_1", "name": "shell", "args": {"command": "ls ```"}}]
    return new_session(svc, [
        message("u", "user", "List files"),
        message("a", "assistant", "", tool_calls=calls),
        message("t", "tool", "a.txt\n```\nb.txt", tool_call_id="call_1", name="shell"),
        message("z", "assistant", "partial", status="interrupted"),
        ("message_update", {"message_id": "z", "content": "Two files.", "status": "sent"}),
    ], provider="openai", model="gpt-x", title="Export me").session_id  # fmt: skip


def test_markdown_has_header_messages_in_order_and_safe_fences(svc: SessionService) -> None:
    sid = _session(svc)
    text = "".join(svc.export(sid, "markdown"))
    assert text.startswith("# Export me\n")
    assert f"`{sid}`" in text and "openai/gpt-x" in text
    order = [text.index(s) for s in ("List files", "Tool call `shell`", "a.txt", "Two files.")]
    assert order == sorted(order)
    assert "partial" not in text  # the update replaced the streamed text
    assert "````\na.txt\n```\nb.txt\n````" in text  # a fence longer than the content's


def test_jsonl_is_every_readable_record(svc: SessionService) -> None:
    sid = _session(svc)
    path = svc.get(sid).path
    with open(path, "ab") as fh:
        fh.write(b"not json\n")
    lines = "".join(svc.export(sid, "jsonl")).splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == list(range(1, 7))
    assert records[0]["type"] == "session_start"


def test_export_is_streamed_in_chunks(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m") as w:
        w.append_many(
            ("transcript_message", {"message": {"id": f"m{i}", "role": "user", "content": "x"}})
            for i in range(1200)
        )
        sid = w.session_id
    chunks = list(svc.export(sid, "markdown"))
    assert len(chunks) == 2 + 1200  # title, details, then one chunk per message


def test_unknown_format_and_unknown_session(svc: SessionService) -> None:
    sid = _session(svc)
    with pytest.raises(MttuiError):
        svc.export(sid, "pdf")
    with pytest.raises(MttuiError):
        svc.export("ffffffffffff", "markdown")
