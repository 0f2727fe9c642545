"""Pending inputs (pending.md): Queue and Steer items folded from ``pending_*`` records.

No LangGraph, no Textual: the index, the transcript fold, the runtime and the UI
all use :class:`Lane`, so they agree on every state. Records (docs/formats.md)::

    pending_add    item_id, mode=queue, text        a queue item at the tail (waiting)
    pending_edit   item_id, text                    new text (queue, not yet taken)
    pending_move   item_id, position                1-based place among the waiting items
    pending_remove item_id                          gone (a queue item, or a failed steer)
    pending_steer  item_id, mode=steer, text, message   a steer and its user message (unread)
    pending_take   item_id, message                 a queue item becomes this user message
    pending_read   item_ids, message_ids, run_id, read_at   a batch of steers taken
    pending_fail   item_id, error                   queue: back to the head, needs_retry;
                                                    steer: failed (not delivered)
    pending_retry  item_id                          needs_retry → waiting (the user asked)

A ``message_update {status: error}`` of an unread steer's message also fails it.
Only the queue's order and each item's logged state live here; *held* is an
in-memory overlay of the process that opened the session (pending.md "restart").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .errors import MttuiError
from .plain import Plain
from .reader import iter_lines, parse_line

if TYPE_CHECKING:
    from .record_types import Message

CAPACITY = 10
# Queue items that still wait to run (``held`` is only ever an overlay of ``waiting``).
QUEUED_STATES = ("waiting", "held", "needs_retry")
# Items a lane shows and a transition can still change.
ACTIVE_STATES = ("waiting", "needs_retry", "unread", "failed")
NOT_DELIVERED = "not delivered: the session stopped before the run read it"
# Records that carry a transcript ``message`` (the one-record transitions).
MESSAGE_TYPES = ("transcript_message", "pending_steer", "pending_take")


class PendingError(MttuiError):
    """A refused pending-input operation (one line; nothing was written)."""


def message_of(rec: Mapping[str, object]) -> Message | None:
    """The transcript message a record adds (``transcript_message``, ``pending_steer``,
    ``pending_take``), else ``None``."""
    msg = rec.get("message")
    if rec.get("type") in MESSAGE_TYPES and isinstance(msg, dict):
        return cast("Message", msg)
    return None


def read_ids(rec: Mapping[str, object]) -> list[str]:
    """The message ids a ``pending_read`` record marks read (and moves to its position)."""
    ids = rec.get("message_ids") if rec.get("type") == "pending_read" else None
    return [str(i) for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _item_id(rec: Mapping[str, object]) -> str | None:
    for key in ("item_id", "pending_id", "id"):  # older spellings last
        value = rec.get(key)
        if isinstance(value, str):
            return value
    return None


class Item(Plain, frozen=False):
    """One pending input as its records tell it."""

    id: str
    mode: str  # queue | steer
    text: str
    state: str  # waiting needs_retry taken unread read failed
    created_at: str = ""
    message_id: str | None = None
    error: str | None = None

    def as_json(self, position: int | None, held: bool = False) -> dict[str, object]:
        state = "held" if held and self.state == "waiting" else self.state
        out: dict[str, object] = {
            "id": self.id, "mode": self.mode, "text": self.text, "state": state,
            "position": position, "created_at": self.created_at,
        }  # fmt: skip
        if self.message_id:
            out["message_id"] = self.message_id
        if self.error:
            out["error"] = self.error
        return out


class Lane:
    """The pending inputs of one session: every item by id, the queue in lane order."""

    def __init__(self) -> None:
        self.items: dict[str, Item] = {}
        self.order: list[str] = []  # queue items in a QUEUED state, head first
        self.by_message: dict[str, str] = {}  # message id -> unread steer item id

    @classmethod
    def fold(cls, records: Iterable[Mapping[str, object]]) -> Lane:
        lane = cls()
        for rec in records:
            lane.apply(rec)
        return lane

    # -- views -------------------------------------------------------------------
    def queue(self) -> list[Item]:
        """Queue items that still wait (waiting, needs_retry), head first."""
        return [self.items[i] for i in self.order]

    def position(self, item_id: str) -> int | None:
        return self.order.index(item_id) + 1 if item_id in self.order else None

    def steers(self, *states: str) -> list[Item]:
        return [i for i in self.items.values() if i.mode == "steer" and i.state in states]

    def unread(self) -> list[Item]:
        return self.steers("unread")

    def active(self) -> list[Item]:
        """What a lane shows: the queue in order, then unread and failed steers."""
        return self.queue() + self.steers("unread", "failed")

    def view(self, held: set[str] | frozenset[str] = frozenset(),
             stale: set[str] | frozenset[str] = frozenset()) -> list[dict[str, object]]:
        """Active items as ``queue list --json`` shows them: ``held`` waiting items are
        shown held, ``stale`` unread steers (a previous process's) as failed."""
        out = []
        for item in self.active():
            row = item.as_json(self.position(item.id), item.id in held)
            if item.id in stale and item.state == "unread":
                row.update(state="failed", error=NOT_DELIVERED)
            out.append(row)
        return out

    def get(self, item_id: str) -> Item | None:
        """An item by id or by a unique id prefix (``queue edit S 3f2a``)."""
        if item_id in self.items:
            return self.items[item_id]
        found = [i for k, i in self.items.items() if k.startswith(item_id)] if item_id else []
        return found[0] if len(found) == 1 else None

    # -- transitions -------------------------------------------------------------
    def apply(self, rec: Mapping[str, object], ts: str | None = None) -> list[str]:
        """Apply one record; returns the ids of the items it changed (or removed).

        Items in a final state (taken, read) never change again except by
        ``pending_remove``; that is what lets the index load only active items.
        """
        kind = rec.get("type")
        if kind == "message_update":
            return self._message_update(rec)
        if kind == "pending_read":
            ids = rec.get("item_ids")
            done = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
            return [i for i in done if self._set(i, "read", only=("unread",))]
        item_id = _item_id(rec)
        if item_id is None or not isinstance(kind, str):
            return []
        item = self.items.get(item_id)
        when = ts if ts is not None else str(rec.get("timestamp") or "")
        if kind in ("pending_add", "pending_steer"):
            if item is not None:
                return []
            steer = kind == "pending_steer" or rec.get("mode") == "steer"
            msg: Message = message_of(rec) or {}
            new = Item(item_id, "steer" if steer else "queue", str(rec.get("text") or ""),
                       "unread" if steer else "waiting", when,
                       str(msg["id"]) if msg.get("id") else None)  # fmt: skip
            self.items[item_id] = new
            if steer and new.message_id:
                self.by_message[new.message_id] = item_id
            elif not steer:
                self.order.append(item_id)
            return [item_id]
        if item is None:
            return []
        if kind == "pending_remove":
            self._drop(item_id)
            return [item_id]
        queued = item.mode == "queue" and item.state in ("waiting", "needs_retry")
        text, position = rec.get("text"), rec.get("position")
        if kind == "pending_edit" and queued and isinstance(text, str):
            item.text = text
        elif kind == "pending_move" and queued and isinstance(position, int):
            self._place(item_id, position)
        elif kind == "pending_take" and queued:
            taken = message_of(rec)
            if taken is not None:
                item.state, item.message_id, item.error = "taken", str(taken.get("id") or ""), None
                self.order.remove(item_id)
            else:  # taken, but its user message was never written: back to the head
                item.state = "waiting"
                self._place(item_id, 1)
        elif kind == "pending_fail" and (queued or item.state == "unread"):
            item.error = str(rec.get("error") or "") or None
            if item.mode == "queue":
                item.state = "needs_retry"
                self._place(item_id, 1)
            else:
                self._set(item_id, "failed", only=("unread",))
        elif kind == "pending_retry" and item.mode == "queue" and item.state == "needs_retry":
            item.state, item.error = "waiting", None
        else:
            return []
        return [item_id]

    def _message_update(self, rec: Mapping[str, object]) -> list[str]:
        item_id = self.by_message.get(str(rec.get("message_id") or ""))
        if item_id is None or rec.get("status") != "error":
            return []
        self.items[item_id].error = str(rec.get("error") or NOT_DELIVERED)
        return [item_id] if self._set(item_id, "failed", only=("unread",)) else []

    def _set(self, item_id: str, state: str, *, only: tuple[str, ...]) -> bool:
        item = self.items.get(item_id)
        if item is None or item.state not in only:
            return False
        item.state = state
        if state != "unread" and item.message_id:
            self.by_message.pop(item.message_id, None)
        return True

    def _place(self, item_id: str, position: int) -> None:
        if item_id in self.order:
            self.order.remove(item_id)
        self.order.insert(max(0, min(position - 1, len(self.order))), item_id)

    def _drop(self, item_id: str) -> None:
        item = self.items.pop(item_id)
        if item_id in self.order:
            self.order.remove(item_id)
        if item.message_id:
            self.by_message.pop(item.message_id, None)

    # -- checks before writing -----------------------------------------------------
    def check_add(self) -> None:
        if len(self.order) >= CAPACITY:
            raise PendingError(f"the queue is full ({CAPACITY} items): wait for one to run "
                               "or remove one; your text was not queued")

    def editable(self, item_id: str) -> Item:
        """The queue item ``item_id`` (or a unique prefix) if it can still be changed."""
        item = self.get(item_id)
        if item is None:
            raise PendingError(f"no pending input {item_id!r} in this session")
        if item.mode == "steer":
            raise PendingError("a steer cannot be changed: it is already part of the "
                               "conversation")
        if item.id not in self.order:
            raise PendingError(f"queue item {item.id} was already taken ({item.state})")
        return item


def read_lane(path: Path) -> Lane:
    """The lane of a session log; only pending and message-update lines are parsed."""
    lane = Lane()
    for _, raw, complete in iter_lines(path):
        head = raw[:40]
        if complete and (b'"type":"pending_' in head or b'"type":"message_update"' in head):
            rec = parse_line(raw)
            if rec is not None:
                lane.apply(rec)
    return lane
