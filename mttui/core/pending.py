"""Pending inputs of one open session at run time: Queue, Steer, the hold and the drain.

Usage (``SessionHandle.pending``; every method may block on an fsync)::

    pending = PendingInputs(writer, runner)  # items found now are held (pending.md)
    pending.add("then run the tests")        # Queue (capacity 10: PendingError)
    pending.steer("use pytest -x")           # Steer while a run is busy
    pending.hold()                           # a user stop: nothing runs by itself
    pending.resume_queue()                   # the user's "Resume queue"
    for events in pending.drain():           # one drain per session; Steer first
        for event in events: ...             # a run's events (approvals as usual)

The runner's graph takes Steers at its safe boundaries through :meth:`waiting`
and :meth:`take` (``pending_node``). Nothing here imports Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from mttui.graph.events import MessageAdded, Notice, PendingChanged, RunEnded, RunEvent
from mttui.graph.messages import new_message_id
from mttui.graph.redact import Redactor
from mttui.session.pending import NOT_DELIVERED, Item, Lane, PendingError
from mttui.session.records import iso_timestamp, new_id

from .attachments import AttachmentError, with_notice
from .attachments import model_text as with_files
from .attachments import resolve as resolve_files
from .lane_view import restart_sets

if TYPE_CHECKING:
    from mttui.graph.runner import Runner
    from mttui.session.writer import SessionWriter

Json = dict[str, object]

__all__ = ["PendingError", "PendingInputs"]


class PendingInputs:
    """The lane of one session opened for writing by this process (thread-safe)."""

    def __init__(self, writer: SessionWriter, runner: Runner | None = None, *,
                 hold: bool = True) -> None:
        self.writer = writer
        self._runner = runner
        self.lane: Lane = self.writer.lane()  # the index's, or folded from the log
        # pending.md "after a restart": what exists now waits for Resume queue, and
        # steers a previous process accepted but never ran are not delivered.
        held, self._stale = restart_sets(self.lane)
        self.held: set[str] = held if hold else set()  # queue items and unread steers
        self._holding = False  # after a user stop: what arrives now is held too
        self._lock = threading.RLock()
        self._draining = threading.Lock()
        self._taking: str | None = None
        if runner is not None:
            runner.attach_steers(self)

    @property
    def runner(self) -> Runner:
        if self._runner is None:
            raise PendingError("this session is not open for running")
        return self._runner

    # -- views -------------------------------------------------------------------
    def items(self) -> list[Json]:
        """Active items as ``queue list --json`` shows them (held overlaid, also on
        Steers held by a stop; stale steers shown as failed before that is written)."""
        with self._lock:
            rows = self.lane.view(self.held, self._stale)
            for row in rows:  # a Steer held after a stop waits like a queue item
                if row["mode"] == "steer" and row["state"] == "unread" and row["id"] in self.held:
                    row["state"] = "held"
            return rows

    def read_steers(self) -> list[Item]:
        """Steers already taken (receipts the UI may still show)."""
        with self._lock:
            return self.lane.steers("read")

    @property
    def is_held(self) -> bool:
        """Something waits for the user's "Resume queue" (a queue item or a Steer)."""
        with self._lock:
            return any(i.id in self.held for i in self.lane.queue() + self.lane.unread())

    # -- restart -----------------------------------------------------------------
    def settle(self) -> None:
        """Write what the restart rules imply (before this process writes anything
        else): stale unread steers become ``error`` messages, never replayed."""
        with self._lock:
            stale = [i for i in self.lane.unread() if i.id in self._stale]
            self._stale.clear()
            if not stale:
                return
            recs = self.writer.append_many(
                ("message_update", {"message_id": i.message_id, "status": "error",
                                    "error": NOT_DELIVERED})
                for i in stale
            )  # fmt: skip
            for rec in recs:
                self.lane.apply(rec)

    # -- the user's operations ---------------------------------------------------
    def _write(self, type_: str, **fields: object) -> Json:
        rec = self.writer.append(type_, **fields)
        self.lane.apply(rec)
        return rec

    def add(self, text: str) -> Item:
        """Queue ``text`` at the tail; refused beyond the capacity (nothing written)."""
        if not text.strip():
            raise PendingError("an empty text cannot be queued")
        with self._lock:
            self.lane.check_add()
            self.settle()
            rec = self._write("pending_add", item_id=new_id("pend"), mode="queue",
                              text=self._redacted(text))  # fmt: skip
            return self._hold_new(str(rec["item_id"]))

    def steer(self, text: str) -> Item:
        """Accept a Steer: one record that is also its (unread) user message."""
        if not text.strip():
            raise PendingError("an empty text cannot be sent")
        with self._lock:
            self.settle()
            text = self._redacted(text)
            msg = {"id": new_message_id(), "role": "user", "content": text, "status": "pending"}
            rec = self._write("pending_steer", item_id=new_id("pend"), mode="steer", text=text,
                              message=msg)  # fmt: skip
            return self._hold_new(str(rec["item_id"]))

    def _redacted(self, text: str) -> str:
        """``text`` with the secrets it holds replaced (in every spelling) before it is
        written: the environment's, and the configured API key when a runner has it."""
        key = self._runner.settings.api_key if self._runner is not None else None
        return Redactor.from_env(also={"OPENAI_API_KEY": key}).text(text)

    def _hold_new(self, item_id: str) -> Item:
        if self._holding:
            self.held.add(item_id)
        return self.lane.items[item_id]

    def _editable(self, item_id: str) -> Item:
        item = self.lane.editable(item_id)
        if item.id == self._taking:
            raise PendingError(f"queue item {item.id} is being sent right now")
        return item

    def edit(self, item_id: str, text: str) -> Item:
        if not text.strip():
            raise PendingError("a queued text cannot be empty (remove the item instead)")
        with self._lock:
            item = self._editable(item_id)
            self.settle()
            self._write("pending_edit", item_id=item.id, text=self._redacted(text))
            return item

    def move(self, item_id: str, position: int) -> Item:
        with self._lock:
            item = self._editable(item_id)
            count = len(self.lane.order)
            if not 1 <= position <= count:
                raise PendingError(f"position must be between 1 and {count}")
            self.settle()
            self._write("pending_move", item_id=item.id, position=position)
            return item

    def remove(self, item_id: str) -> Item:
        """Delete a queue item not yet taken, or dismiss a failed steer."""
        with self._lock:
            self.settle()  # a stale steer is failed from here on, and may be dismissed
            item = self.lane.get(item_id)
            if item is None or item.mode != "steer" or item.state != "failed":
                item = self._editable(item_id)
            self._write("pending_remove", item_id=item.id)
            self.held.discard(item.id)
            return item

    def retry(self, item_id: str) -> None:
        """A needs-retry queue item may run again (at the head)."""
        with self._lock:
            item = self._editable(item_id)
            self.held.discard(item.id)
            if item.state == "needs_retry":
                self.settle()
                self._write("pending_retry", item_id=item.id)

    def resume_queue(self) -> None:
        """The user's "Resume queue": nothing is held, needs-retry items run again."""
        with self._lock:
            self.held.clear()
            self._holding = False
            for item in self.lane.queue():
                if item.state == "needs_retry" and item.id != self._taking:
                    self.settle()
                    self._write("pending_retry", item_id=item.id)

    def pause_queue(self) -> None:
        """Hold every waiting item (in memory, like after a restart)."""
        with self._lock:
            self.held = {i.id for i in self.lane.queue()}

    def hold(self) -> None:
        """A user stop: what waits in the lane (queue items and Steers not yet read)
        and what is added until the next turn is held, shown held, and runs only
        after "Resume queue" (:meth:`resume_queue`) — never at once after the stop."""
        with self._lock:
            self._holding = True
            self.held.update(i.id for i in self.lane.queue())
            self.held.update(i.id for i in self._ours())

    def next_turn(self) -> None:
        """The user sends a new message: Steers typed during its run are its own
        again (what was held stays held)."""
        with self._lock:
            self._holding = False

    # -- the graph's side (pending_node) --------------------------------------------
    def _ours(self) -> list[Item]:
        """Unread Steers of this process the graph or the drain may take (not held)."""
        return [i for i in self.lane.unread() if i.id not in self._stale
                and i.id not in self.held]  # fmt: skip

    def waiting(self) -> bool:
        with self._lock:
            return bool(self._ours())

    def take(self, emit: Callable[[RunEvent], None], run_id: str | None = None) -> list[Json]:
        """Take every unread Steer as one batch (one ``pending_read`` record); emits the
        messages (now read) and returns them for the graph."""
        with self._lock:
            items = self._ours()
            if not items:
                return []
            msgs = [self._message(i) for i in items]
            self._write("pending_read", item_ids=[i.id for i in items],
                        message_ids=[m["id"] for m in msgs], run_id=run_id,
                        read_at=iso_timestamp())  # fmt: skip
        for msg in msgs:
            emit(MessageAdded(msg))
        emit(PendingChanged("steers read"))
        return msgs

    @staticmethod
    def _message(item: Item) -> Json:
        return {"id": item.message_id, "role": "user", "content": item.text, "status": "sent"}

    # -- draining ------------------------------------------------------------------
    def drain(self, *, stop: Callable[[], bool] | None = None) -> Iterator[Iterator[RunEvent]]:
        """Runs to do while idle, one after the other: unread Steers first (one batch),
        then the queue head unless held or needing a retry. Only one drain at a time
        per session (a second one yields nothing). ``stop()`` ends it between runs."""
        if not self._draining.acquire(blocking=False):
            return
        try:
            while stop is None or not stop():
                run = self.next_run()
                if run is None:
                    return
                yield run
        finally:
            self._draining.release()

    def next_run(self) -> Iterator[RunEvent] | None:
        """The next run of the drain, or ``None`` (nothing to do, or an approval waits)."""
        if self._work() is None or self.runner.busy or self._approval_waits():
            return None
        with self._lock:
            self.settle()
            work = self._work()  # again: the lane may have changed meanwhile
            if work is None:
                return None
            steers, head = work
            if steers:
                msgs = [self._message(i) for i in steers]
                rec = ("pending_read", {"item_ids": [i.id for i in steers],
                                        "message_ids": [m["id"] for m in msgs],
                                        "read_at": iso_timestamp()})  # fmt: skip
                return self._start(msgs, rec, steers)
            assert head is not None
            self._taking = head.id
            user: Json = {"id": new_message_id(), "role": "user", "content": head.text,
                    "status": "sent"}  # fmt: skip
            try:  # its @files, read now (as a message sent at once would be)
                found = resolve_files(self.runner.project, head.text)
            except AttachmentError as exc:
                self._taking = None
                self._not_started([head], str(exc))
                said: list[RunEvent] = [Notice("error", f"not sent: {exc}"),
                                        PendingChanged("not sent")]  # fmt: skip
                return iter(said)
            files = found.files
            if files:
                user["attachments"] = [f.record() for f in files]
            return with_notice(self._start(
                [user], ("pending_take", {"item_id": head.id, "message": user}), [head],
                with_files(head.text, files) if files else None), found.notice())

    def _work(self) -> tuple[list[Item], Item | None] | None:
        """``(unread steers, queue head)`` when the drain has something to run."""
        with self._lock:
            steers = self._ours()
            queue = self.lane.queue()
            head = queue[0] if queue else None
            if not steers and (head is None or head.id in self.held or head.state != "waiting"):
                return None
            return steers, head

    def _approval_waits(self) -> bool:
        try:
            return self.runner.pending_approval() is not None
        except Exception:  # e.g. no model: the run fails and says why, the item stays
            return False

    def _start(self, users: list[Json], record: tuple[str, Json],
               items: list[Item], model_text: str | None = None) -> Iterator[RunEvent]:
        """A run whose first record is ``record``; a failure before it is written
        sends the items back (queue: head, needs_retry; steers: not delivered)."""
        events = self.runner.run_messages(users, record, model_text=model_text)
        try:
            first = next(events)
        except Exception as exc:  # nothing was written: the input is not lost
            self._not_started(items, str(exc) or type(exc).__name__)
            yield Notice("error", f"not sent: {str(exc) or type(exc).__name__}")
            yield PendingChanged("not sent")
            return
        finally:
            self._taking = None
        with self._lock:
            self.lane.apply({"type": record[0], **record[1]})
        yield PendingChanged("taken")
        yield first
        for event in events:
            if isinstance(event, RunEnded) and event.status == "error":
                self.pause_queue()  # a broken model must not use up the whole queue
            yield event

    def _not_started(self, items: list[Item], error: str) -> None:
        with self._lock:
            for item in items:
                if item.mode == "queue":
                    self._write("pending_fail", item_id=item.id, error=error)
                else:
                    self._write("message_update", message_id=item.message_id,
                                status="error", error=f"not delivered: {error}")  # fmt: skip
