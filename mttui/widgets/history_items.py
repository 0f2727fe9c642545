"""The items of the chat history and how pages of messages become items.

Pure data (no Textual): one assistant message with tool calls becomes an
assistant item plus one tool item per call; a tool message joins the tool item
of its call when that call is loaded; compressions and resumes (found in the log
by :mod:`mttui.widgets.markers`) become items after the message they follow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from mttui.session.markers import LEDGER_KINDS, Marker
from mttui.session.models import MessageRow

Kind = Literal["user", "assistant", "tool", "compression", "warnings", "notice", "system",
               "cleared", "rewound"]
EXPANDABLE = frozenset({"tool", "compression", "rewound"})
MARKER_KINDS = frozenset({"compression", "warnings", "cleared"})

# Short texts for resume codes when only the code is known (session_resumed records).
WARNING_TEXT = {
    "history_length_mismatch": "checkpoint and transcript disagree on the messages; "
    "the checkpoint is used",
    "transcript_incomplete": "the checkpoint has messages the transcript lacks",
    "corrupt_lines_skipped": "unreadable lines of the log were skipped",
    "tool_interrupted": "tool calls were running when the process stopped; not run again",
    "dangling_tool_call_closed": "tool calls without a result were closed",
    "approval_pending": "an approval is asked again",
    "queue_held": "queued inputs are held until the queue is resumed",
    "execution_not_restored": "only the conversation was restored",
}


@dataclass(eq=False)
class Item:
    kind: Kind
    key: str
    seq: int  # the message seq it comes from (markers: the seq they follow)
    text: str = ""
    status: str = ""
    tool: str = ""
    call_id: str = ""
    args: Any = None
    output: str | None = None
    result_seq: int | None = None  # seq of the tool message joined to a tool item
    expanded: bool = False
    streaming: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    # render cache, filled by the renderer (``blocks``: an answer's finished Markdown blocks)
    lines: list[Any] | None = None
    blocks: dict[tuple[str, int], Any] = field(default_factory=dict)
    body: int = 0
    width: int = 0

    @property
    def expandable(self) -> bool:
        return self.kind in EXPANDABLE

    @property
    def last_seq(self) -> int:
        return max(self.seq, self.result_seq or 0)

    def invalidate(self) -> None:
        self.lines = None


def tool_status(row: MessageRow) -> str:
    """The outcome of a tool message: success, error, denied, cancelled or interrupted."""
    head = row.content.lstrip().lower()
    for word in ("denied", "cancelled", "interrupted"):
        if head.startswith(word):
            return word
    if row.status in ("error", "interrupted"):
        return row.status
    return "success"


def items_from_rows(rows: Iterable[MessageRow], markers: Iterable[Marker] = ()) -> list[Item]:
    """Items of consecutive message rows (ascending), with the markers among them."""
    out: list[Item] = []
    calls: dict[str, Item] = {}
    pending = sorted((m for m in markers if m.kind not in LEDGER_KINDS),
                     key=lambda m: (m.anchor, m.record_seq))
    mi = 0

    def flush_markers(upto: int) -> None:
        nonlocal mi
        while mi < len(pending) and pending[mi].anchor <= upto:
            out.append(marker_item(pending[mi]))
            mi += 1

    for row in rows:
        flush_markers(row.seq - 1)
        if row.role == "tool":
            target = calls.get(row.tool_call_id or "")
            if target is not None and target.output is None:
                attach_result(target, row)
                continue
            out.append(Item("tool", f"r{row.seq}", row.seq, tool=row.name or "tool",
                            call_id=row.tool_call_id or "", output=row.content,
                            status=tool_status(row), result_seq=row.seq))
            continue
        if row.role == "assistant":
            if row.content.strip() or not row.tool_calls:
                out.append(Item("assistant", f"m{row.seq}", row.seq, text=row.content,
                                status=row.status))
            for i, call in enumerate(row.tool_calls or []):
                item = Item("tool", f"c{row.seq}.{i}", row.seq, tool=str(call.get("name", "")),
                            call_id=str(call.get("id", "")), args=call.get("args", {}),
                            status="open")
                calls[item.call_id] = item
                out.append(item)
            continue
        kind: Kind = "user" if row.role == "user" else "system"
        out.append(Item(kind, f"m{row.seq}", row.seq, text=row.content, status=row.status))
    flush_markers(1 << 62)
    return out


def attach_result(item: Item, row: MessageRow) -> None:
    item.output = row.content
    item.status = tool_status(row)
    item.result_seq = row.seq
    item.invalidate()


def join_results(items: list[Item]) -> list[Item]:
    """Fold standalone tool results into the tool item of their call (after a page join)."""
    calls = {it.call_id: it for it in items
             if it.kind == "tool" and it.output is None and it.call_id}
    if not calls:
        return items
    out = []
    for it in items:
        target = calls.get(it.call_id) if it.kind == "tool" and it.key.startswith("r") else None
        if target is not None and target is not it:
            target.output, target.status, target.result_seq = it.output, it.status, it.result_seq
            target.invalidate()
            continue
        out.append(it)
    return out


def marker_item(marker: Marker) -> Item:
    data = marker.data
    if marker.kind == "compression":
        return Item("compression", f"k{marker.record_seq}", marker.anchor,
                    text=str(data.get("summary") or ""), data=data)
    if marker.kind == "cleared":
        return Item("cleared", f"c{marker.record_seq}", marker.anchor,
                    text="cleared · the model starts over from here")
    if marker.kind == "rewind":
        return rewind_item(marker)
    return Item("warnings", f"w{marker.record_seq}", marker.anchor,
                data={"mode": data.get("mode", ""), "warnings": warning_list(data)})


def warning_list(data: dict[str, Any]) -> list[dict[str, Any]]:
    """``[{code, message}]`` from a ``session_resumed`` record or a resume plan."""
    out = []
    for w in data.get("warnings") or []:
        if isinstance(w, dict):
            code = str(w.get("code", ""))
            out.append({"code": code, "message": str(w.get("message") or WARNING_TEXT.get(code,
                                                                                      ""))})
        else:
            out.append({"code": str(w), "message": WARNING_TEXT.get(str(w), "")})
    return out


def markers_in(markers: Iterable[Marker], lo: int, hi: int, *, first: bool,
               last: bool) -> list[Marker]:
    """Markers that belong to a page of messages ``lo..hi`` (``first``/``last``: the ends)."""
    return [m for m in markers
            if (lo <= m.anchor <= hi) or (first and m.anchor < lo) or (last and m.anchor > hi)]


def rewind_item(marker: Marker) -> Item:
    """A notice where a conversation rewind (or its undo) happened."""
    d = marker.data
    lo, hi = d.get("abandoned_from_seq"), d.get("abandoned_to_seq")
    span = f"#{lo}–#{hi}" if lo != hi else f"#{lo}"
    if d.get("undo"):
        back = f"#{d.get('restored_from_seq')}–#{d.get('restored_to_seq')}"
        text = f"⟲ rewind undone: {back} are back in the model's view"
        text += f"; {span} became a rewound branch" if isinstance(hi, int) and isinstance(
            lo, int) and hi >= lo else ""
    else:
        text = (f"⟲ rewound to before #{d.get('to_seq')}: {span} above are a rewound branch "
                "(kept here and searchable, never sent to the model again)")
    return Item("notice", f"rw{marker.record_seq}", marker.anchor, text=text, status="warning",
                data={"rewind": "undo" if d.get("undo") else "to"})
