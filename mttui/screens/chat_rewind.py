"""Time travel from the chat screen: ``/rewind``, ``/rewind undo``, ``esc esc`` on an empty
idle prompt, ``/fork``, ``alt+n`` on a selected history message, and settling an
interrupted tool call selected in the history (``alt+d`` done, ``alt+x`` failed, ``alt+r``
re-run). These keys take a modifier and act only while the history has the focus: plain
letters typed after a click go to the prompt (chat_keys.py).

The chat screen calls these functions; the blocking work (git, the checkpoint db, the
log) runs in thread workers through the use cases of ``mttui.core``.
"""

from __future__ import annotations

import time
from typing import Any

from mttui.core.rewind import RewindResult
from mttui.messages import OpenSession
from mttui.widgets.history_items import Item
from mttui.widgets.history_ledger import can_settle, ledger_line
from mttui.widgets.prompt import PromptArea

from .rewind import RewindScreen

DOUBLE_ESCAPE = 0.6  # seconds between the two escapes
PICK_FIRST = "select {} in the history first (click it, or shift+tab then up/down)"


# The chat screen (typed loosely: it imports this module). These functions use its
# service, settings, chat (ChatSession), state, history, prompt, notify and workers.
ChatLike = Any


def time_travel_command(screen: ChatLike, text: str) -> bool:
    """Handle ``/rewind``, ``/rewind undo`` and ``/fork``; ``False``: not one of them."""
    command = text.strip()
    if command == "/rewind":
        open_rewind(screen)
        return True
    if command == "/rewind undo":
        undo_last(screen)
        return True
    if command == "/fork":
        fork_at(screen, None)
        return True
    return False


def _ready(screen: ChatLike) -> str | None:
    """The session id when time travel may start now, else ``None`` (the user is told)."""
    sid = screen.chat.session_id
    if sid is None:
        screen.notify("nothing to rewind yet: send a message first", severity="warning")
        return None
    if screen.state == "read-only":
        screen.notify("this session is open in another process", severity="error")
        return None
    if screen.state != "idle" or (screen.chat.handle is not None and screen.chat.handle.busy):
        screen.notify("a run is active: stop it first (escape)", severity="warning")
        return None
    return sid


def double_escape(screen: ChatLike) -> bool:
    """``escape`` on an empty prompt while idle: the second one within a moment opens the
    rewind picker. ``True`` when it did."""
    prompt = screen.query_one(PromptArea)
    if screen.state != "idle" or prompt.text.strip():
        return False
    now = time.monotonic()
    last = getattr(screen, "rewind_escape_at", 0.0)
    setattr(screen, "rewind_escape_at", now)  # noqa: B010 - kept on the screen between presses
    if now - last > DOUBLE_ESCAPE:
        return False
    setattr(screen, "rewind_escape_at", 0.0)  # noqa: B010
    open_rewind(screen)
    return True


def open_rewind(screen: ChatLike) -> None:
    from mttui.core.rewind_points import preview, rewind_points

    sid = _ready(screen)
    if sid is None:
        return
    service, chat = screen.service, screen.chat
    found: dict[str, Any] = {}

    def apply(seq: int, conversation: bool, code: bool) -> RewindResult:
        from mttui.core.rewind import rewind, rewind_held

        handle = chat.handle
        if handle is None:
            result = rewind(service, screen.settings, sid, seq, conversation=conversation,
                            code=code)
        else:
            result = rewind_held(handle, service, screen.settings, seq,
                                 conversation=conversation, code=code)
        found["markers"] = service.markers(sid)  # the rewind's notice in the history
        return result

    def done(result: RewindResult | None) -> None:
        if result is not None:
            _after(screen, result, undo=False, markers=found.get("markers"))

    screen.app.push_screen(RewindScreen(lambda: rewind_points(service, sid),
                                        lambda seq: preview(service, sid, seq), apply), done)


def _after(screen: ChatLike, result: RewindResult, *, undo: bool,
           markers: Any = None) -> None:
    """Main thread: the prompt gets the rewound message back, the history reloads."""
    if markers is not None:
        screen.history.set_markers(markers)
    if result.prompt and not undo:
        prompt = screen.query_one(PromptArea)
        prompt.text = result.prompt
        prompt.move_cursor(prompt.document.end)  # ready to edit at its end
        prompt.focus()
    screen.history.load_newest()
    files = len(result.files_restored) + len(result.files_deleted)
    what = "undone" if undo else f"rewound to #{result.to_seq}"
    extra = f"; {files} file(s) changed" if result.code else ""
    extra += " (/rewind undo to go back)" if result.code and not undo else ""
    screen.notify(f"{what}{extra}", timeout=6)


def undo_last(screen: ChatLike) -> None:
    sid = _ready(screen)
    if sid is None:
        return
    service, chat, app = screen.service, screen.chat, screen.app

    def work() -> None:
        from mttui.core.rewind import rewind_held, undo_rewind

        try:
            handle = chat.handle
            if handle is None:
                result = undo_rewind(service, screen.settings, sid)
            else:
                result = rewind_held(handle, service, screen.settings, None)
        except Exception as exc:  # noqa: BLE001 - one line to the user
            app.call_from_thread(screen.notify, f"not undone: {exc}", severity="error")
            return
        markers = service.markers(sid)
        app.call_from_thread(_after, screen, result, undo=True, markers=markers)

    screen.run_worker(work, thread=True, group="time-travel", exit_on_error=False)


def fork_at(screen: ChatLike, seq: int | None) -> None:
    """Fork the session at ``seq`` (``None``: its last message) and open the fork."""
    sid = screen.chat.session_id
    if sid is None:
        screen.notify("nothing to fork yet", severity="warning")
        return
    service, settings, app = screen.service, screen.settings, screen.app

    def work() -> None:
        from mttui.core.fork import fork

        try:
            result = fork(service, settings, sid, at=seq)
        except Exception as exc:  # noqa: BLE001
            app.call_from_thread(screen.notify, f"not forked: {exc}", severity="error")
            return
        moved = (f" (moved back from #{result.adjusted_from}: it split a tool batch)"
                 if result.adjusted_from is not None else "")
        app.call_from_thread(screen.notify, f"forked at #{result.seq}{moved}: "
                             f"{result.title} — ctrl+o goes back", timeout=6)
        screen.post_message(OpenSession(result.session_id))

    screen.run_worker(work, thread=True, group="time-travel", exit_on_error=False)


def fork_selected(screen: ChatLike) -> None:
    """``alt+n`` on a message selected in the focused history."""
    item = screen.history.selected if screen.history.has_focus else None
    if item is None:
        screen.notify(PICK_FIRST.format("a message"), severity="warning")
        return
    fork_at(screen, item.seq)


def _selected_unsettled_call(screen: ChatLike) -> Item | None:
    """The selected history item if it is an interrupted tool call the user has not
    settled yet; else ``None``, and the user is told why."""
    item = screen.history.selected if screen.history.has_focus else None
    if item is None or not item.call_id or item.status != "interrupted":
        screen.notify(PICK_FIRST.format("an interrupted tool call"), severity="warning")
        return None
    if not can_settle(item):
        screen.notify(f"{item.call_id} is already settled ({ledger_line(item)})",
                      severity="warning")
        return None
    return item


def settle_selected(screen: ChatLike, action: str) -> None:
    """``alt+d`` / ``alt+x`` on a selected interrupted tool call: mark it done / failed."""
    item = _selected_unsettled_call(screen)
    if item is None:
        return
    sid = _ready(screen)
    if sid is None:
        return
    service, chat, app, call_id = screen.service, screen.chat, screen.app, item.call_id

    def work() -> None:
        from mttui.core.ledger import settle, settle_open

        try:
            handle = chat.handle
            if handle is None:
                call = settle(service, screen.settings, sid, call_id, action)
            else:
                call = settle_open(handle.writer, service, screen.settings,
                                   service.get(sid), call_id, action, None)
                handle.runner.invalidate()
        except Exception as exc:  # noqa: BLE001
            app.call_from_thread(screen.notify, f"not settled: {exc}", severity="error")
            return
        markers = service.markers(sid)  # the resolution labels the call in the history
        app.call_from_thread(screen.notify, f"{call.call_id} marked {call.state}; the model "
                             "is told on its next turn")
        app.call_from_thread(screen.history.set_markers, markers)
        app.call_from_thread(screen.history.reload)

    screen.run_worker(work, thread=True, group="time-travel", exit_on_error=False)


def rerun_selected(screen: ChatLike) -> None:
    """``alt+r`` on a selected interrupted tool call: a new call of the same tool and
    arguments in a new run, after a new approval (asked in the chat as usual)."""
    item = _selected_unsettled_call(screen)
    if item is None:
        return
    if _ready(screen) is None:
        return
    service, chat, app, call_id = screen.service, screen.chat, screen.app, item.call_id
    screen.state = "starting"

    def work() -> None:
        from mttui.core.drive import drive
        from mttui.core.ledger import rerun

        try:
            handle = chat.open_for_writing()
            if handle is None:
                raise RuntimeError(chat.read_only or "open in another process")
            if not handle.resumed:
                screen.resume_now()
            events = rerun(handle, service, call_id)
        except Exception as exc:  # noqa: BLE001
            app.call_from_thread(screen.notify, f"not re-run: {exc}", severity="error")
            return
        try:
            drive(handle, events, emit=screen.emit, ask=screen.ask)
        finally:  # the re-run (or its denial) labels the old call in the history
            markers = service.markers(handle.session_id)
            app.call_from_thread(screen.history.set_markers, markers)
            app.call_from_thread(screen.history.load_newest)

    screen.run_worker(work, thread=True, group="run", exit_on_error=False)
