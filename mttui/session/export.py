"""Exporting a session as Markdown (readable) or JSONL (the readable records, verbatim)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from .log import dump_record
from .models import MessageRow, SessionInfo
from .reader import read_records

_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}


def export_jsonl(path: Path) -> Iterator[str]:
    """Every readable record as one line; corrupt and torn lines are left out."""
    for _, rec in read_records(path):
        yield dump_record(rec).decode("utf-8")


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:  # a fence longer than any run of backticks inside
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def export_markdown(info: SessionInfo, messages: Iterable[MessageRow]) -> Iterator[str]:
    """The transcript as Markdown, streamed one message at a time."""
    model = "/".join(p for p in (info.provider, info.model) if p) or "unknown"
    yield f"# {info.title or 'Untitled session'}\n\n"
    yield (
        f"- session: `{info.id}`\n- project: `{info.project}`\n"
        f"- created: {info.created_at}\n- updated: {info.updated_at}\n"
        f"- model: {model}\n- messages: {info.message_count}\n"
    )
    for msg in messages:
        head = _ROLE_TITLES.get(msg.role, msg.role.title())
        if msg.role == "tool" and msg.name:
            head += f" result (`{msg.name}`)"
        status = "" if msg.status in ("sent", "") else f" · {msg.status}"
        parts = [f"\n---\n\n### {head} · {msg.created_at}{status}\n"]
        if msg.content:
            parts.append("\n" + (_fence(msg.content) if msg.role == "tool" else msg.content) + "\n")
        for call in msg.tool_calls or []:
            args = json.dumps(call.get("args", {}), ensure_ascii=False, indent=2)
            parts.append(f"\nTool call `{call.get('name', '?')}` ({call.get('id', '')}):\n\n")
            parts.append(_fence(args, "json") + "\n")
        yield "".join(parts)
