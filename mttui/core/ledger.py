"""The tool ledger: calls that were dispatched and have no real outcome, and settling them.

Usage (blocks on files: call from a worker)::

    calls = ledger(service, "last").calls          # LedgerCall(call_id, tool_name, …, state)
    settle(service, settings, "last", "call_1", "mark-done", note="it did run")

``mark-done`` / ``mark-failed`` append ``tool_resolution`` and a short system note
(logged as a system message and added to the model's thread) that the model
reads on its next turn. An interrupted call is never run again automatically.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mttui.session.errors import MttuiError
from mttui.session.models import SessionInfo
from mttui.session.records import new_id
from mttui.session.service import SessionService
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold
from mttui.session.writer import SessionWriter

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.events import RunEvent

    from .handle import SessionHandle

ACTIONS = {"mark-done": "done", "mark-failed": "failed", "rerun": "rerun"}


class LedgerRefused(MttuiError):
    """Not an interrupted call of the session, or already settled (exit 1)."""


@dataclass
class LedgerCall:
    call_id: str
    tool_name: str
    arguments: dict[str, object]
    state: str  # interrupted | done | failed | rerun
    run_id: str
    note: str = ""
    rerun_call_id: str = ""  # the new call of a re-run
    # that call: waiting (for its approval) | approved | denied | not_started (the
    # process ended before its approval was asked: a re-run always asks, so it never ran)
    rerun: str = ""

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "call_id": self.call_id, "tool_name": self.tool_name, "arguments": self.arguments,
            "state": self.state, "run_id": self.run_id, "note": self.note}
        if self.rerun_call_id:
            out["rerun"] = {"call_id": self.rerun_call_id, "state": self.rerun}
        return out


@dataclass
class Ledger:
    session_id: str
    calls: list[LedgerCall] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"session_id": self.session_id, "calls": [c.as_json() for c in self.calls]}

    @property
    def unsettled(self) -> int:
        return sum(1 for c in self.calls if c.state == "interrupted")


def ledger_of(service: SessionService, info: SessionInfo) -> Ledger:
    """Every call that was dispatched and then interrupted (no outcome, or an
    ``interrupted`` one), with its ledger state."""
    records, _ = service.records(info.id)
    t = fold(records)
    resolutions = read_timeline(info.path).resolutions
    args: dict[str, dict[str, object]] = {}
    for m in t.messages:
        for call in m.get("tool_calls") or []:
            args[str(call.get("id"))] = dict(call.get("args") or {})
    asked = {str(c.get("call_id")) for r in records if r.get("type") == "approval_request"
             for c in r.get("tool_calls") or [] if isinstance(c, dict)}
    out = Ledger(info.id)
    for cid, rec in t.dispatched.items():
        if t.outcomes.get(cid, "interrupted") != "interrupted":
            continue
        res = resolutions.get(cid)
        state = str(res.get("resolution")) if res else "interrupted"
        entry = LedgerCall(cid, str(rec.get("tool_name") or ""), args.get(cid, {}), state,
                          str(rec.get("run_id") or ""), str(res.get("note") or "") if res else "")
        new = res.get("rerun_call_id") if res else None
        if state == "rerun" and isinstance(new, str) and new:
            said = [d[new] for d in t.decided.values() if new in d]
            entry.rerun_call_id = new
            entry.rerun = {"deny": "denied", "approve": "approved"}.get(
                said[-1] if said else "", "waiting")
            if new not in asked:  # killed before its approval was asked: it never ran
                entry.rerun = "not_started"
            if entry.rerun in ("denied", "not_started"):  # the old call is still unsettled
                entry.state = "interrupted"
        out.calls.append(entry)
    return out


def ledger(service: SessionService, ref: str) -> Ledger:
    return ledger_of(service, service.resolve(ref))


def note_text(call: LedgerCall, resolution: str, note: str | None) -> str:
    """The one short system note the model reads on its next turn."""
    found = "did run (the user checked)" if resolution == "done" else "did not take effect"
    text = f"Note: the interrupted tool call {call.call_id} ({call.tool_name}) {found}."
    return text + (f" The user adds: {note}" if note else "")


def settle(service: SessionService, settings: Settings, ref: str, call_id: str, action: str,
           note: str | None = None) -> LedgerCall:
    """``mark-done`` / ``mark-failed`` an interrupted call (takes the session's lock)."""
    info = service.resolve(ref)
    writer = service.open_session(info.path)
    try:
        return settle_open(writer, service, settings, info, call_id, action, note)
    finally:
        writer.close()


def settle_open(writer: SessionWriter, service: SessionService, settings: Settings,
                info: SessionInfo, call_id: str, action: str, note: str | None) -> LedgerCall:
    """The same on a session this process holds open (the TUI)."""
    from langchain_core.messages import SystemMessage

    from mttui.graph.seed import append_to_thread

    if action not in ("mark-done", "mark-failed"):
        raise LedgerRefused(f"unknown ledger action {action!r}")
    found = {c.call_id: c for c in ledger_of(service, info).calls}
    call = found.get(call_id)
    if call is None:
        raise LedgerRefused(f"{call_id} is not an interrupted tool call of session {info.id} "
                            f"(see `mttui ledger {info.id}`)")
    if call.state != "interrupted":
        raise LedgerRefused(f"{call_id} is already settled ({call.state})")
    resolution = ACTIONS[action]
    text = note_text(call, resolution, note)
    message = {"id": new_id("msg"), "role": "system", "content": text, "status": "sent"}
    writer.append_many([
        ("tool_resolution", {"call_id": call_id, "resolution": resolution,
                             "note": note or ""}),
        ("transcript_message", {"message": message}),
    ])
    if writer.thread_id:
        append_to_thread(writer, settings, project=Path(info.project),
                         checkpoints_path=service.layout.checkpoints_path(info.project_hash),
                         messages=[SystemMessage(content=text, id=message["id"])])
    call.state, call.note = resolution, note or ""
    return call


def rerun(handle: SessionHandle, service: SessionService, call_id: str,
          note: str | None = None) -> Iterator[RunEvent]:
    """``rerun``: the old call's state becomes ``rerun`` (it stays interrupted in the
    history) and a **new** call of the same tool and arguments runs in a new run, after
    a new approval (always asked). Drive the returned events with ``core.drive.drive``.

    The resolution names the new call (``rerun_call_id``): if that call is denied at its
    approval, nothing ran and the old call is listed as interrupted again."""
    from mttui.graph.rerun import rerun_call

    info = service.get(handle.session_id)
    found = {c.call_id: c for c in ledger_of(service, info).calls}
    call = found.get(call_id)
    if call is None:
        raise LedgerRefused(f"{call_id} is not an interrupted tool call of session {info.id}")
    if call.state != "interrupted":
        raise LedgerRefused(f"{call_id} is already settled ({call.state})")
    new_call = new_id("call")
    handle.writer.append("tool_resolution", call_id=call_id, resolution="rerun",
                         note=note or "", rerun_call_id=new_call)
    return rerun_call(handle.runner, call.tool_name, dict(call.arguments), new_call)
