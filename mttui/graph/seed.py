"""A new LangGraph thread seeded with a given model's view (rewind, fork).

No model is called: the graph is compiled around the offline model only to write
the seed checkpoint, as the transcript-only resume does.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mttui.config import Settings
from mttui.session.records import new_id
from mttui.session.transcript import in_model_view
from mttui.session.writer import SessionWriter

from .compression.summary import SUMMARY_HEADER
from .journal import Journal
from .messages import STEER_MARK, from_record

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

CLOSED = "interrupted: this call has no result in the conversation; it is not run again"


def view_messages(summary: str | None, view: Sequence[Mapping[str, Any]],
                  contents: Mapping[str, str] | None = None,
                  steers: Set[str] = frozenset()) -> list[BaseMessage]:
    """LangChain messages of a view: the summary first, each tool result right after its
    call (a call without a result gets a short closing result, a stray result is dropped).
    ``contents``: what the model was sent for a message, where it differs from the log's
    text (a prompt with its ``@file`` blocks; see :func:`sent_contents`); ``steers``: the
    ids of user messages that came as Steers (marked, so one batch reaches the model as
    one message, as it did in the source)."""
    from langchain_core.messages import HumanMessage, ToolMessage

    shown = [m for m in view if in_model_view(m)]
    results = {str(m.get("tool_call_id")): m for m in shown if m.get("role") == "tool"}
    out: list[BaseMessage] = []
    templates: dict[str, Any] = {}
    if summary is not None:
        out.append(HumanMessage(content=SUMMARY_HEADER + summary, id=new_id("summary")))
    for m in shown:
        if m.get("role") == "tool":
            continue
        sent = contents.get(str(m.get("id"))) if contents else None
        if m.get("id") in steers:  # few: built and validated as the steer node makes them
            out.append(HumanMessage(content=str(m.get("content") if sent is None else sent),
                                    id=m.get("id"), additional_kwargs={STEER_MARK: True}))
        else:
            out.append(built(m if sent is None else {**m, "content": sent}, templates))
        for call in m.get("tool_calls") or []:
            found = results.get(str(call.get("id")))
            if found is not None:
                out.append(built(found, templates))
            else:
                out.append(ToolMessage(content=CLOSED, tool_call_id=call["id"],
                                       name=call.get("name") or "", id=new_id("msg"),
                                       status="error"))
    return out


def built(rec: Mapping[str, Any], templates: dict[str, Any] | None = None) -> BaseMessage:
    """``from_record`` without pydantic's validation of each message: a copy of a validated
    message of the same kind with its fields replaced (validating 100 000 messages, or
    even ``model_construct``-ing them, took seconds)."""
    role, mid, text = rec.get("role"), rec.get("id"), str(rec.get("content") or "")
    name = rec.get("name")
    if (not isinstance(mid, str | None) or not isinstance(name, str | None)
            or (role not in ("user", "system", "tool") and rec.get("tool_calls"))):
        return from_record(dict(rec))
    fields: dict[str, Any] = {"content": text, "id": mid}
    if role == "tool":
        ok = rec.get("tool_status", "success") == "success"
        fields.update(tool_call_id=str(rec.get("tool_call_id") or ""), name=name,
                      status="success" if ok else "error")
    kind = role if role in ("user", "system", "tool") else "assistant"
    return _copy_of(_template(kind, {} if templates is None else templates), fields)


def _template(kind: str, templates: dict[str, Any]) -> Any:
    """A validated message of ``kind`` taken apart for copying (once per ``templates``):
    its class, fields, the fields holding a mutable value (made anew per copy), the
    fields set and its private values."""
    found = templates.get(kind)
    if found is None:
        made = from_record({"role": kind, "id": "msg-template", "content": "",
                            "tool_call_id": "", "name": None})
        base = dict(made.__dict__)
        fresh = [(k, type(v)) for k, v in base.items() if isinstance(v, dict | list)]
        found = (type(made), base, fresh, set(made.__pydantic_fields_set__),
                 made.__pydantic_private__)
        templates[kind] = found
    return found


def _copy_of(template: Any, fields: dict[str, Any]) -> BaseMessage:
    """The template's message with ``fields`` set; its mutable defaults (all empty in
    the template) made anew."""
    cls, base, fresh, fields_set, private = template
    values = base.copy()
    for key, make in fresh:
        values[key] = make()
    values.update(fields)
    out = object.__new__(cls)
    object.__setattr__(out, "__dict__", values)
    object.__setattr__(out, "__pydantic_fields_set__", fields_set | fields.keys())
    object.__setattr__(out, "__pydantic_extra__", {})
    object.__setattr__(out, "__pydantic_private__", private)
    return out


def seed_thread(writer: SessionWriter, settings: Settings, *, project: Path,
                checkpoints_path: Path, messages: list[BaseMessage],
                thread_id: str | None = None) -> str:
    """Write a new thread whose state holds ``messages``; returns its id. The log is
    not written here: the caller appends the record naming the thread."""
    from .agent import build_graph
    from .checkpoints import open_saver
    from .context import make_context
    from .models.offline import OfflineChatModel

    ctx = make_context(settings, OfflineChatModel(), project=project, journal=Journal(writer),
                       remembered=set(), stop=threading.Event(), grace=0.0)
    saver = open_saver(checkpoints_path)
    try:
        graph = build_graph(ctx, saver)
        thread_id = thread_id or new_id("thread")
        # The reducer over every message id costs ~0.3 s per 100 000 messages: when all
        # have ids (it would leave them as they are), the checkpoint is written with none
        # and its messages put in after, the same checkpoint as the reducer would make.
        direct = all(m.id is not None for m in messages)
        config = graph.update_state(
            {"configurable": {"thread_id": thread_id}},
            {"messages": [] if direct else messages, "pending_tool_calls": [],
             "completed_tool_calls": [], "approval_requests": [],
             "needs_human_approval": False, "step_count": 0, "stop_reason": "stopped",
             "run_id": ""},
            as_node="observation",
        )  # fmt: skip
        if direct and messages:
            _put_messages(saver, config, messages)
        return thread_id
    finally:
        saver.conn.close()


def _put_messages(saver: Any, config: Any, messages: list[BaseMessage]) -> None:
    """Set the messages of the checkpoint ``config`` names (in place: same id, parent,
    metadata and channel versions)."""
    saver.set_messages(config, messages)


def append_to_thread(writer: SessionWriter, settings: Settings, *, project: Path,
                     checkpoints_path: Path, messages: list[BaseMessage]) -> None:
    """Add ``messages`` to the session's current thread (after its last step), e.g. a
    system note the model reads on its next turn. The caller logs them first."""
    from .agent import build_graph
    from .checkpoints import open_saver
    from .context import make_context
    from .models.offline import OfflineChatModel

    ctx = make_context(settings, OfflineChatModel(), project=project, journal=Journal(writer),
                       remembered=set(), stop=threading.Event(), grace=0.0)
    saver = open_saver(checkpoints_path)
    try:
        graph = build_graph(ctx, saver)
        config = {"configurable": {"thread_id": writer.thread_id}}
        graph.update_state(config, {"messages": messages}, as_node="observation")  # type: ignore[arg-type]
    finally:
        saver.conn.close()


GONE = "[attached file {path} ({size} bytes): its content is no longer available]"


def sent_contents(checkpoints_path: Path, thread_ids: Sequence[str],
                  view: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """What the model was sent for each prompt of ``view`` with ``@file`` attachments (the
    log keeps the typed text and the files' names and hashes): read from the newest
    thread of ``thread_ids`` that still holds the message; a note naming the file when
    none does, so a fork or rewind never silently drops what the model had seen."""
    wanted = {str(m.get("id")): m for m in view
              if m.get("role") == "user" and m.get("attachments")}
    if not wanted:
        return {}
    from .checkpoints import open_saver

    found: dict[str, str] = {}
    saver = open_saver(checkpoints_path)
    try:
        for tid in reversed(list(thread_ids)):
            tup = saver.get_tuple({"configurable": {"thread_id": tid}})
            values = tup.checkpoint.get("channel_values", {}) if tup is not None else {}
            for msg in values.get("messages") or []:
                mid = getattr(msg, "id", None)
                if mid in wanted and mid not in found and isinstance(msg.content, str):
                    found[mid] = msg.content
            if len(found) == len(wanted):
                break
    finally:
        saver.conn.close()
    for mid, m in wanted.items():
        if mid not in found:
            notes = [GONE.format(path=a.get("path"), size=a.get("bytes"))
                     for a in m.get("attachments") or [] if isinstance(a, dict)]
            found[mid] = "\n\n".join([str(m.get("content") or ""), *notes])
    return found
