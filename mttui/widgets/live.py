"""Run events → history items, on the UI thread.

Streamed text is collected and re-rendered at most every ``FLUSH`` seconds, so a
fast model does not re-render the Markdown of its answer on every token; when a
draw (its paint included) costs more, the interval grows to three times its cost.
"""

from __future__ import annotations

import time
from typing import Any

from textual.timer import Timer

from mttui.graph import events as ev

from .history import HistoryView
from .history_items import Item, Kind, warning_list

FLUSH = 0.05  # the shortest interval between two draws of a stream
MAX_FLUSH = 0.5


class LiveTranscript:
    """Keeps the live end of a :class:`HistoryView` in step with a running session."""

    def __init__(self, view: HistoryView) -> None:
        self.view = view
        self.streams: dict[str, Item] = {}
        self.dirty: set[Item] = set()
        self._timer: Timer | None = None
        self._interval = FLUSH
        self.error_shown = ""  # an error message of the run (not repeated as a notice)

    # -- helpers --------------------------------------------------------------
    def _next_seq(self) -> int:
        if self.view.has_newer:  # the live end is not shown; "end" reloads it
            return 0
        self.view.newest_seq += 1
        return self.view.newest_seq

    def _tool(self, call_id: str) -> Item | None:
        return self.view.find(lambda it: it.kind == "tool" and it.call_id == call_id)

    def _set_status(self, call_id: str, status: str) -> None:
        item = self._tool(call_id)
        if item is not None:
            item.status = status
            self.view.update_item(item)

    def notice(self, text: str, level: str = "info") -> None:
        self.view.add_item(Item("notice", f"n{id(text)}-{self.view.newest_seq}",
                                self.view.newest_seq, text=text, status=level))

    def warnings(self, mode: str, warnings: list[dict[str, Any]], key: str) -> None:
        data = {"mode": mode, "warnings": warning_list({"warnings": warnings})}
        self.view.add_item(Item("warnings", key, self.view.newest_seq, data=data))

    # -- events ---------------------------------------------------------------
    def apply(self, event: ev.RunEvent) -> None:
        if isinstance(event, ev.TextDelta):
            self._delta(event)
        elif isinstance(event, ev.MessageAdded):
            if event.message.get("status") == "error":
                self.error_shown = str(event.message.get("content") or "")
            self._message(event.message)
        elif isinstance(event, ev.ApprovalRequested):
            for call in event.tool_calls:
                self._set_status(str(call.get("call_id")), "awaiting")
        elif isinstance(event, ev.ApprovalDecided):
            for cid, decision in event.decisions.items():
                self._set_status(cid, "approved" if decision == "approve" else "denied")
        elif isinstance(event, ev.ToolDispatched):
            item = self._tool(event.call_id)
            if item is not None:
                item.data["started"] = time.monotonic()  # the block counts the seconds
            self._set_status(event.call_id, "running")
        elif isinstance(event, ev.ToolOutput):
            item = self._tool(event.call_id)
            if item is not None and item.status == "running":
                item.data["tail"] = event.tail
                self.view.update_item(item)
        elif isinstance(event, ev.ToolFinished):
            item = self._tool(event.call_id)
            if item is not None:
                item.status, item.output = event.status, event.output
                self.view.update_item(item)
        elif isinstance(event, ev.Compressed):
            data = {"removed_count": event.removed_count, "kept_count": event.kept_count,
                    "tokens_before": event.tokens_before, "tokens_after": event.tokens_after,
                    "trigger": event.trigger}
            self.view.add_item(Item("compression", f"k-live-{self.view.newest_seq}",
                                    self.view.newest_seq, text=event.summary, data=data))
        elif isinstance(event, ev.RunEnded):
            self.flush()
            for item in list(self.streams.values()):  # a stream that never completed
                item.streaming = False
                item.status = item.status or "interrupted"
                self.view.update_item(item)
            self.streams.clear()
            if event.status == "stopped":
                self.notice("stopped", "warning")
            elif event.status == "error" and not (
                    self.error_shown and (event.error or "") in self.error_shown):
                self.notice(event.error or "the run failed", "error")  # shown once
            self.error_shown = ""
        elif isinstance(event, ev.Notice) and event.level in ("warning", "error"):
            self.notice(event.text, event.level)
        elif isinstance(event, ev.ModelRetry):  # "retrying 1/2 after timeout"
            self.notice(event.text, "warning")

    def _delta(self, event: ev.TextDelta) -> None:
        item = self.streams.get(event.message_id)
        if item is None:
            item = Item("assistant", f"s-{event.message_id}", self.view.newest_seq + 1,
                        streaming=True)
            self.streams[event.message_id] = item
            self.view.add_item(item)
        item.text += event.text
        self.dirty.add(item)
        if self._timer is None:
            self._timer = self.view.set_timer(self._interval, self.flush)

    def tick(self) -> None:
        """Redraw running tool blocks (their spinner and seconds)."""
        for item in self.view.items:
            if item.kind == "tool" and item.status == "running" and "started" in item.data:
                self.view.update_item(item)

    def flush(self) -> None:
        self._timer = None
        if not self.dirty:
            return
        started = time.perf_counter()
        for item in list(self.dirty):
            self.view.update_item(item)
        self.dirty.clear()
        # Drawing a stream may take about a quarter of the time, so keys stay ahead of
        # it: a draw's cost is counted until the screen has been painted (Textual's
        # compositor often costs more than the item's render).
        self.view.call_after_refresh(self._drawn, started)

    def _drawn(self, started: float) -> None:
        cost = time.perf_counter() - started
        self._interval = min(MAX_FLUSH, max(FLUSH, 3 * cost))

    def _message(self, msg: dict[str, Any]) -> None:
        role = msg.get("role")
        mid = str(msg.get("id", ""))
        seq = self._next_seq()
        content = str(msg.get("content") or "")
        status = str(msg.get("status") or "")
        if role == "tool":
            item = self._tool(str(msg.get("tool_call_id", "")))
            if item is not None:
                item.result_seq = seq
                if item.output is None:
                    item.output = content
                if item.status in ("open", "running", "approved", "awaiting", ""):
                    item.status = "error" if status == "error" else "success"
                self.view.update_item(item)
                return
            self.view.add_item(Item("tool", f"r{seq}", seq, tool=str(msg.get("name") or "tool"),
                                    call_id=str(msg.get("tool_call_id") or ""), output=content,
                                    status="error" if status == "error" else "success",
                                    result_seq=seq))
            return
        if role == "assistant":
            stream = self.streams.pop(mid, None)
            if stream is not None:
                self.dirty.discard(stream)
            if stream is not None and not content.strip() and msg.get("tool_calls"):
                self.view.remove_item(stream)
                stream = None
            if stream is not None:
                stream.text, stream.status, stream.streaming = content, status, False
                stream.seq, stream.key = seq, f"m{seq}"
                self.view.update_item(stream)
            elif content.strip() or not msg.get("tool_calls"):
                self.view.add_item(Item("assistant", f"m{seq}", seq, text=content,
                                        status=status))
            for i, call in enumerate(msg.get("tool_calls") or []):
                self.view.add_item(Item("tool", f"c{seq}.{i}", seq, tool=str(call.get("name")),
                                        call_id=str(call.get("id", "")),
                                        args=call.get("args", {}), status="open"))
            return
        kind: Kind = "user" if role == "user" else "system"
        self.view.add_item(Item(kind, f"m{seq}", seq, text=content, status=status))
