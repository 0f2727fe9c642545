"""LangChain messages ↔ the transcript ``message`` object of storage.md.

The transcript id and the LangChain message id are the same string
(``msg-<uuid hex>``), so transcript and checkpoint compare by id. LangChain is
imported only inside :func:`from_record`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mttui.session.records import new_id

ROLE_OF = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


def new_message_id() -> str:
    return new_id("msg")


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)
    return "" if content is None else str(content)


def to_record(
    message: Any,
    *,
    status: str = "sent",
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The storage.md message object of a LangChain message (``id`` must be set)."""
    role = ROLE_OF.get(getattr(message, "type", ""), "assistant")
    rec: dict[str, Any] = {
        "id": message.id,
        "role": role,
        "content": content_text(message.content),
        "status": status,
    }
    calls = getattr(message, "tool_calls", None)
    if role == "assistant" and calls:
        rec["tool_calls"] = [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls]
    if role == "tool":
        rec["tool_call_id"] = message.tool_call_id
        rec["name"] = getattr(message, "name", None)
    if usage is not None:
        rec["usage"] = usage
    rec.update({k: v for k, v in extra.items() if v is not None})
    return rec


def from_record(rec: dict[str, Any]) -> Any:
    """The LangChain message of a transcript message object (for rebuilding a thread)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    role, mid, text = rec.get("role"), rec.get("id"), str(rec.get("content") or "")
    if role == "user":
        return HumanMessage(content=text, id=mid)
    if role == "system":
        return SystemMessage(content=text, id=mid)
    if role == "tool":
        ok = rec.get("tool_status", "success") == "success"
        return ToolMessage(
            content=text,
            id=mid,
            tool_call_id=rec.get("tool_call_id") or "",
            name=rec.get("name"),
            status="success" if ok else "error",
        )
    calls = [
        {"id": c["id"], "name": c["name"], "args": c.get("args") or {}, "type": "tool_call"}
        for c in rec.get("tool_calls") or []
    ]
    return AIMessage(content=text, id=mid, tool_calls=calls)


def arguments_sha256(arguments: Any) -> str:
    """sha256 of the canonical JSON of a call's arguments (for ``tool_dispatch``)."""
    import hashlib

    canon = json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class ToolPairingError(AssertionError):
    """An assistant tool call without exactly one tool result (the model would get HTTP 400)."""


def assert_paired(messages: list[Any]) -> None:
    """Every tool call of every assistant message has exactly one tool message, and
    every tool message answers a call. Raises :class:`ToolPairingError`, never fixes."""
    calls: dict[str, str] = {}
    answers: dict[str, int] = {}
    for m in messages:
        kind = getattr(m, "type", "")
        if kind == "ai":
            for c in getattr(m, "tool_calls", None) or []:
                if c["id"] in calls:
                    raise ToolPairingError(f"tool call id {c['id']} is used twice")
                calls[c["id"]] = c["name"]
        elif kind == "tool":
            tid = m.tool_call_id
            answers[tid] = answers.get(tid, 0) + 1
    problems = [
        f"{cid} ({name}) has no result" for cid, name in calls.items() if cid not in answers
    ]
    problems += [f"{cid} has {n} results" for cid, n in answers.items() if n > 1]
    problems += [f"tool result {cid} answers no call" for cid in answers if cid not in calls]
    if problems:
        raise ToolPairingError(
            "tool calls and tool results do not pair up: " + "; ".join(problems[:5])
        )


# a Steer's LangChain message carries this in ``additional_kwargs`` (one batch of
# Steers reaches the model as one message)
STEER_MARK = "mttui_steer"


def turn_message_id(messages: Sequence[Any]) -> str:
    """The id of the last user message of the model's view (the turn a tool call
    belongs to); a compression summary is not one. ``""`` when there is none."""
    for msg in reversed(messages):
        mid = getattr(msg, "id", None)
        if getattr(msg, "type", "") == "human" and isinstance(mid, str) \
                and not mid.startswith("summary-"):
            return mid
    return ""
