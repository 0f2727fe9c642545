"""The open session behind a chat screen: writer, runner, resume. No Textual here.

Every method blocks (files, SQLite, LangGraph) and is called from thread workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from mttui.graph.events import ApprovalRequested, RunEnded, RunEvent
from mttui.session.lock import SessionLocked, holder_pid
from mttui.session.models import SessionInfo
from mttui.session.records import title_from_text
from mttui.session.writer import SessionWriter


class RuntimeFactory(Protocol):
    """Builds the runner of one open session (``mttui.graph.runner.Runner``)."""

    def __call__(self, writer: SessionWriter, *, project: Path,
                 checkpoints_path: Path) -> Any: ...


def make_runtime_factory(settings: Any, **runner_options: Any) -> RuntimeFactory:
    """The usual factory: a LangGraph runner with ``settings`` (imported lazily)."""

    def factory(writer: SessionWriter, *, project: Path, checkpoints_path: Path) -> Any:
        from mttui.graph.runner import Runner

        return Runner(writer, settings, checkpoints_path=checkpoints_path, project=project,
                      **runner_options)

    return factory


class ChatSession:
    """One session as the chat screen holds it."""

    def __init__(self, service: Any, settings: Any, factory: RuntimeFactory) -> None:
        self.service = service
        self.settings = settings
        self.factory = factory
        self.info: SessionInfo | None = None
        self.writer: SessionWriter | None = None
        self.runner: Any = None
        self.read_only: str | None = None  # why the session cannot be written
        self.resumed = False  # the resume is applied once, when first needed

    @property
    def session_id(self) -> str | None:
        return self.info.id if self.info else (self.writer.session_id if self.writer else None)

    def load(self, session_id: str) -> SessionInfo:
        self.info = self.service.get(session_id)
        return self.info

    def writable(self) -> bool:
        """Whether no other process writes the session (a read-only probe of its lock)."""
        assert self.info is not None
        pid = holder_pid(Path(self.info.path))
        if pid is not None and self.writer is None:
            holder = f"process {pid}" if pid > 0 else "another process"
            self.read_only = f"open for writing in {holder}"
            return False
        return True

    def open_for_writing(self) -> bool:
        """Take the write lock and build the runner (once); ``False`` if locked.

        Only done when something will be written: reading a session leaves its
        file untouched."""
        assert self.info is not None
        if self.writer is not None:
            return True
        try:
            self.writer = self.service.open_writer(self.info.id)
        except SessionLocked as exc:
            self.read_only = str(exc) or "open for writing in another process"
            return False
        self.runner = self._runner(self.writer, self.info.project, self.info.project_hash)
        return True

    def create(self, first_text: str) -> SessionWriter:
        """A new session in the service's project, titled from the first message."""
        s = self.settings
        writer = self.service.create_session(provider=s.provider, model=s.model,
                                             title=title_from_text(first_text) or None)
        self.writer = writer
        self.runner = self._runner(writer, str(self.service.project), self.service.project_hash)
        self.info = self.service.get(writer.session_id)
        self.resumed = True
        return writer

    def _runner(self, writer: SessionWriter, project: str, project_hash: str) -> Any:
        checkpoints = self.service.layout.checkpoints_path(project_hash)
        return self.factory(writer, project=Path(project), checkpoints_path=checkpoints)

    def resume(self) -> tuple[str, list[dict[str, Any]], ApprovalRequested | None]:
        """Apply the resume (resume.md): ``(mode, warnings, approval asked again)``."""
        from mttui.graph.reopen import reopen

        mode, warnings = reopen(self.runner)
        self.resumed = True
        return mode, warnings, self.runner.pending_approval()

    def events(self, what: str, *args: Any, **kw: Any) -> Callable[[], Iterator[RunEvent]]:
        """A deferred call of a runner generator (``run``, ``answer_approval``, ``compact``)."""
        return lambda: getattr(self.runner, what)(*args, **kw)

    def drive(self, start: Callable[[], Iterator[RunEvent]], *,
              emit: Callable[[RunEvent], None],
              ask: Callable[[ApprovalRequested], Any],
              pending: ApprovalRequested | None = None) -> None:
        """Pass a run's events to ``emit`` until it ends; when it waits for an approval,
        ``ask`` for a decision (``None``: leave it pending) and go on with the answer."""
        events: Iterator[RunEvent] | None = start()
        while events is not None:
            request, end = pending, None
            pending = None
            for event in events:
                emit(event)
                if isinstance(event, ApprovalRequested):
                    request = event
                elif isinstance(event, RunEnded):
                    end = event
            events = None
            if request is not None and (end is None or end.status == "awaiting_approval"):
                decision = ask(request)
                if decision is None:
                    return
                events = self.runner.answer_approval(
                    decision.request_id, decision.decisions, reason=decision.reason,
                    remember=decision.remember)

    def diffs(self, request: ApprovalRequested) -> dict[str, str]:
        """Diff previews of the file-changing calls of an approval request."""
        try:
            from mttui.graph.tools.diff import preview_diff
        except ImportError:  # pragma: no cover - the runtime ships it
            return {}
        project = Path(self.runner.project) if self.runner else self.service.project
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
        runner = self.runner
        if runner is not None and wait:
            runner.stop()
            deadline = time.monotonic() + wait
            while runner.busy and time.monotonic() < deadline:
                time.sleep(0.02)
        try:
            if self.runner is not None:
                if self.resumed:  # only a session that was written to gets its end
                    self.runner.end_session()
                self.runner.close()
        finally:
            self.runner = None
            if self.writer is not None:
                self.writer.close()
                self.writer = None
