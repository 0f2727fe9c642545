"""The session behind a chat screen: read first, opened for writing only when needed.

Every method blocks (files, SQLite, LangGraph) and is called from thread workers.
Reading a session leaves its file untouched; the write lock is taken, and the
resume applied, only when something will be written. No Textual here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mttui.graph.events import ApprovalRequested, RunEvent, ToolOutput
from mttui.session.errors import MttuiError
from mttui.session.fork_state import incomplete_text
from mttui.session.lock import SessionLocked, holder_pid
from mttui.session.models import SessionInfo
from mttui.session.service import SessionService
from mttui.session.warn import warn
from mttui.session.writer import SessionWriter

from .drive import Approver, Emit, Outcome, send
from .handle import Resumed, RunnerFactory, SessionHandle, langgraph_runner
from .resume_preview import ResumePreview

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.runner import Runner


class ChatSession:
    """One session as the chat screen holds it: its info, and a handle once written."""

    def __init__(self, service: SessionService, settings: Settings,
                 factory: RunnerFactory = langgraph_runner) -> None:
        self.service = service
        self.settings = settings
        self.factory = factory
        self.info: SessionInfo | None = None
        self.handle: SessionHandle | None = None
        self.read_only: str | None = None  # why: another process writes the session
        self.on_output: Callable[[ToolOutput], None] | None = None  # live tool output
        self._created = threading.Event()  # create() ended (made the session or failed)
        self._opening = threading.Lock()  # a send and a queue write open it at once
        self._stop_early = threading.Event()  # a stop of the send under way, not yet applied
        self._made_here = False  # create() made the session: left empty, it is dropped

    @property
    def session_id(self) -> str | None:
        if self.info is not None:
            return self.info.id
        return self.handle.session_id if self.handle is not None else None

    @property
    def writer(self) -> SessionWriter | None:
        return self.handle.writer if self.handle is not None else None

    @property
    def runner(self) -> Runner | None:
        return self.handle.runner if self.handle is not None else None

    @property
    def resumed(self) -> bool:
        return self.handle is not None and self.handle.resumed

    def load(self, session_id: str) -> SessionInfo:
        self.info = self.service.get(session_id)
        return self.info

    def writable(self) -> bool:
        """Whether no other process writes the session (a read-only probe of its lock)."""
        assert self.info is not None
        if self.info.fork_incomplete:  # never written to: finished or deleted instead
            self.read_only = incomplete_text(self.info.id)
            return False
        pid = holder_pid(Path(self.info.path))
        if pid is not None and self.handle is None:
            holder = f"process {pid}" if pid > 0 else "another process"
            self.read_only = f"open for writing in {holder}"
            return False
        return True

    def released(self) -> bool:
        """Whether the other process that wrote this session has let go of it (a
        read-only probe of its lock, as :meth:`writable`): it is writable here again."""
        if (self.read_only is None or self.info is None or self.handle is not None
                or self.info.fork_incomplete):
            return False
        if holder_pid(Path(self.info.path)) is not None:
            return False
        self.read_only = None
        return True

    def open_for_writing(self) -> SessionHandle | None:
        """Take the write lock (once); ``None`` if another process has it."""
        assert self.info is not None
        with self._opening:  # the second caller gets the first one's handle, not a refusal
            if self.handle is None:
                try:
                    self.handle = SessionHandle.open(self.service, self.settings,
                                                     self.info.id, self.factory)
                    self._watch_output(self.handle)
                except SessionLocked as exc:
                    self.read_only = str(exc) or "open for writing in another process"
                    return None
            return self.handle

    def create(self, first_text: str) -> SessionHandle:
        """A new session in the service's project, titled from the first message."""
        try:
            self.handle = SessionHandle.create(self.service, self.settings, first_text,
                                               self.factory)
            self._made_here = True
            self._watch_output(self.handle)
            self.info = self.service.get(self.handle.session_id)
            return self.handle
        finally:
            self._created.set()

    def wait_created(self, timeout: float) -> bool:
        """Wait (worker thread) for a :meth:`create` under way to end; whether it has."""
        return self._created.wait(timeout)

    def _watch_output(self, handle: SessionHandle) -> None:
        """Running tools report their output's tail to :attr:`on_output` (any thread)."""
        out = self.on_output
        if out is not None:
            handle.runner.attach_progress(lambda call_id, tail: out(ToolOutput(call_id, tail)))

    # -- sending ---------------------------------------------------------------------
    def starting(self) -> None:
        """A send begins (the UI thread, before its worker): no stop asked for it yet."""
        self._stop_early.clear()

    def stop(self) -> None:
        """The user's stop (thread-safe). Asked while the send is still creating or
        opening the session, or resuming it, it is kept: the text is not run then, or
        the run stops at its first event (a run forgets stops asked before it began)."""
        self._stop_early.set()
        if self.handle is not None:
            self.handle.stop()

    def send(self, handle: SessionHandle, text: str, *, emit: Emit, ask: Approver) -> Outcome:
        """``text`` sent (``core.drive.send``), with a stop asked before it ran applied:
        then it is not sent (``not_sent``), or its run stops as soon as it begins."""
        early = self._stop_early

        def emit_applying_stop(event: RunEvent) -> None:
            if early.is_set():
                early.clear()
                handle.stop()
            emit(event)

        outcome = send(handle, text, emit=emit_applying_stop, ask=ask, stopped=early.is_set)
        if outcome.end is None and outcome.queued is None and early.is_set():
            handle.stop()  # holds the lane too, as a stop does
            early.clear()
            return Outcome(not_sent="stopped before it was sent")
        return outcome

    def resume(self) -> Resumed:
        assert self.handle is not None
        return self.handle.resume()

    def preview(self) -> ResumePreview:
        """What the resume will do, read-only (nothing written): shown when the session
        opens; the resume itself is applied when the user first acts."""
        from .resume_preview import preview_resume

        assert self.info is not None
        return preview_resume(self.service, self.info.id)

    def grants(self) -> list[str]:
        """The session's grants (tools approved for the session, not revoked), also of a
        session not open for writing (read from its log)."""
        if self.handle is not None:
            return self.handle.grants()
        if self.info is None:
            return []
        return self.service.grants(self.info.id).get(self.info.id, [])

    def revoke_grant(self, tool: str) -> bool:
        """Withdraw a grant (opens the session for writing; ``False``: not granted or
        read-only, see :attr:`read_only`)."""
        handle = self.open_for_writing()
        return handle is not None and handle.revoke_grant(tool)

    def diffs(self, request: ApprovalRequested) -> dict[str, str]:
        """Diff previews of the file-changing calls of an approval request."""
        from mttui.graph.tools.diff import preview_diff

        project = self.runner.project if self.runner is not None else self.service.project
        out = {}
        for call in request.tool_calls:
            try:
                diff = preview_diff(project, str(call.get("tool_name")),
                                    dict(call.get("arguments") or {}))
            except Exception as exc:  # a preview must never block the decision
                diff = f"(no preview: {exc})"
            if diff is not None:
                out[str(call.get("call_id"))] = diff
        return out

    def close(self, wait: float = 0.0) -> None:
        """Leave the session cleanly: ``session_end``, checkpoint db and lock released.

        ``wait``: stop a run first and give it that long to record its end."""
        handle, self.handle = self.handle, None
        if handle is None:
            return
        if wait:
            handle.stop()
            deadline = time.monotonic() + wait
            while handle.busy and time.monotonic() < deadline:
                time.sleep(0.02)
        handle.close()
        if self._made_here:
            self._drop_if_empty(handle.session_id)

    def _drop_if_empty(self, session_id: str) -> None:
        """A session this chat made and left without a message (its first send was
        stopped before it was sent) is deleted: nothing was said, nothing is kept."""
        try:
            if self.service.get(session_id).message_count == 0:
                self.service.delete(session_id)
        except (MttuiError, SessionLocked, OSError) as exc:  # opened elsewhere meanwhile: kept
            warn(__name__, "empty session %s kept: %s", session_id, exc)
