"""One session opened for writing by this process: the use case the TUI and the CLI share.

Usage (every method blocks on files, SQLite or the model: call from a worker)::

    handle = SessionHandle.open(service, settings, "last")   # the lock; SessionLocked
    resumed = handle.resume()          # planned and applied once (resume.md)
    outcome = drive(handle, handle.run("fix the tests"), emit=print, ask=approver)
    handle.close()                     # session_end, checkpoint db, lock

``SessionHandle.create`` starts a new session instead. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mttui.graph.events import ApprovalRequested, Notice, RunEnded, RunEvent
from mttui.session.records import title_from_text
from mttui.session.service import SessionService
from mttui.session.writer import SessionWriter

from .pending import PendingInputs

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.runner import Runner


class RunnerFactory(Protocol):
    """Builds the runner of one open session (tests pass one with a scripted model)."""

    def __call__(self, writer: SessionWriter, settings: Settings, *, project: Path,
                 checkpoints_path: Path) -> Runner: ...


def langgraph_runner(writer: SessionWriter, settings: Settings, *, project: Path,
                     checkpoints_path: Path) -> Runner:
    """The usual runner: the LangGraph agent with ``settings`` (imported only now)."""
    from mttui.graph.runner import Runner

    return Runner(writer, settings, checkpoints_path=checkpoints_path, project=project)


@dataclass(frozen=True)
class ApprovalAnswer:
    """The user's answer to one approval request (per call: approve | deny)."""

    decisions: dict[str, str]
    reason: str | None = None
    remember: tuple[str, ...] = ()
    recorded: bool = False  # already in the log (a decision made before a crash)

    @classmethod
    def for_all(cls, request: ApprovalRequested, approve: bool, reason: str | None = None
                ) -> ApprovalAnswer:
        """The same verdict for every call of ``request``."""
        verdict = "approve" if approve else "deny"
        return cls({str(c["call_id"]): verdict for c in request.tool_calls}, reason)


@dataclass(frozen=True)
class Resumed:
    """What the resume did: its mode, warnings (JSON) and the approval asked again;
    ``decided``: instead, an approval answered before the process stopped, whose
    answer (in the log) is applied when it is driven, never asked again."""

    mode: str
    warnings: list[dict[str, object]]
    pending: ApprovalRequested | None
    decided: ApprovalRequested | None = None
    continues: bool = False  # decided calls never started: the run goes on (run first)


class SessionHandle:
    """One session this process writes: one runner, one lane of pending inputs."""

    def __init__(self, service: SessionService, settings: Settings, writer: SessionWriter,
                 factory: RunnerFactory = langgraph_runner, *, fresh: bool = False) -> None:
        self.service = service  # the service of the session's own project
        self.settings = settings
        self.writer = writer
        self.runner = factory(writer, settings, project=service.project,
                              checkpoints_path=service.checkpoints_path())
        self._pending: PendingInputs | None = None
        self._resumed: Resumed | None = Resumed("execution", [], None) if fresh else None
        self._logged: dict[str, ApprovalAnswer] = {}  # answers found in the log on resume
        self._continues = False  # a run the resume found decided but unfinished

    # -- opening ------------------------------------------------------------------
    @classmethod
    def create(cls, service: SessionService, settings: Settings, first_text: str,
               factory: RunnerFactory = langgraph_runner) -> SessionHandle:
        """A new session in the service's project, titled from its first message.
        Raises ``RunnerError`` first (nothing created) when the settings cannot run."""
        if factory is langgraph_runner:
            from mttui.graph.errors import RunnerError
            from mttui.graph.models.check import config_problem

            problem = config_problem(settings)
            if problem is not None:
                raise RunnerError(problem)
        from mttui.graph.redact import Redactor

        shown = Redactor.from_env(also={"OPENAI_API_KEY": settings.api_key}).text(first_text)
        writer = service.create_session(provider=settings.provider, model=settings.model,
                                        title=title_from_text(shown) or None)  # fmt: skip
        return cls(service, settings, writer, factory, fresh=True)

    @classmethod
    def open(cls, service: SessionService, settings: Settings, ref: str,
             factory: RunnerFactory = langgraph_runner) -> SessionHandle:
        """Take the write lock of session ``ref`` (id, prefix or ``last``).

        Raises ``SessionNotFound``, ``SessionLocked``, and ``ResumeRefused`` when the
        log alone refuses a resume (nothing is written then)."""
        from mttui.graph.resume.apply import check_resumable

        info = service.resolve(ref)
        if info.project_hash != service.project_hash:
            service = SessionService(service.layout.home, Path(info.project))
        from .model_choice import session_settings

        settings = session_settings(settings, info.chosen_model)  # its /model, unless --model
        writer = service.open_session(info.path)
        try:
            check_resumable(writer)
            if (info.provider, info.model) != (settings.provider, settings.model):
                # this process talks to another model than the session did: say so
                writer.append("session_update", provider=settings.provider,
                              model=settings.model)
            return cls(service, settings, writer, factory)
        except BaseException:
            writer.close()
            raise

    # -- state ----------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.writer.session_id

    @property
    def resumed(self) -> bool:
        return self._resumed is not None

    @property
    def pending(self) -> PendingInputs:
        """The session's pending inputs (read from its log once, when first needed)."""
        if self._pending is None:
            self._pending = PendingInputs(self.writer, self.runner)
        return self._pending

    def waiting_approval(self) -> ApprovalRequested | None:
        """The approval the session waits for, if any (asked again after a restart)."""
        return self.runner.pending_approval()

    # -- the use cases ----------------------------------------------------------------
    def resume(self) -> Resumed:
        """Plan the resume once and apply it (resume.md); later calls return the same.

        Closes interrupted calls, rebuilds a transcript-only session, then turns the
        Steers a stopped process never delivered into errors (pending.md). Runs no
        model and no tool; raises ``ResumeRefused`` when the plan refuses."""
        if self._resumed is None:
            from mttui.graph.resume.apply import resume_session

            outcome = resume_session(self.runner)
            self.pending.settle()
            request, decided = outcome.pending, outcome.decided
            self._continues = outcome.continues
            if request is not None and decided is not None:
                self._logged[request.request_id] = ApprovalAnswer(
                    dict(decided["decisions"]), decided.get("reason"), recorded=True)
                self._resumed = Resumed(outcome.mode, list(outcome.warnings), None, request)
            else:
                self._resumed = Resumed(outcome.mode, list(outcome.warnings), request,
                                        continues=outcome.continues)
        return self._resumed

    def continuation(self) -> Iterator[RunEvent] | None:
        """The run the resume found decided but never dispatched (given once): it goes
        on from the checkpoint with that decision. ``None`` when there is none."""
        if not self._continues:
            return None
        self._continues = False
        return self.runner.continue_run()

    def logged_answer(self, request: ApprovalRequested) -> ApprovalAnswer | None:
        """The answer to ``request`` the log already holds (given once), else ``None``:
        a decided approval is applied, never asked twice (resume.md)."""
        return self._logged.pop(request.request_id, None)

    def run(self, text: str) -> Iterator[RunEvent]:
        """One user turn (raises ``ApprovalPendingError`` while an approval waits); a
        decided run the resume found unfinished goes on first."""
        from .attachments import model_text, resolve, with_notice

        found = resolve(self.service.project, text)  # AttachmentError before anything
        if self._pending is not None:
            self._pending.next_turn()  # the user's own message ends a stop's hold on new items
        first = self.continuation()
        files = found.files
        turn = with_notice(self.runner.run(
            text, attachments=[f.record() for f in files] or None,
            model_text=model_text(text, files) if files else None), found.notice())
        return turn if first is None else self._after(first, text, turn)

    def _after(self, first: Iterator[RunEvent], text: str,
               turn: Iterator[RunEvent]) -> Iterator[RunEvent]:
        end: RunEnded | None = None
        for event in first:
            end = event if isinstance(event, RunEnded) else end
            yield event
        if end is None or end.status != "completed":  # it waits, or stopped: text queued
            item = self.pending.add(text)
            yield Notice("warning", f"the message was queued ({item.id}): the run before it "
                                    f"ended {end.status if end else 'early'}")
            return
        yield from turn  # with its @files, read before the run before it

    def answer(self, request: ApprovalRequested, answer: ApprovalAnswer) -> Iterator[RunEvent]:
        """Answer ``request`` and continue the run it belongs to."""
        return self.runner.answer_approval(request.request_id, answer.decisions,
                                           reason=answer.reason, remember=list(answer.remember),
                                           recorded=answer.recorded)

    def compact(self, instructions: str | None = None) -> Iterator[RunEvent]:
        """Compress the history the model sees now (``Compressed`` or a ``Notice``)."""
        return self.runner.compact(instructions)

    def set_model(self, name: str) -> str:
        """``/model NAME``: this session's model from the next run on, kept across
        resumes (raises ``ModelChoiceError``); the model now in use."""
        from .model_choice import choose_model

        self.settings = choose_model(self.writer, self.runner, self.settings, name)
        return self.settings.model

    def grants(self) -> list[str]:
        """The tools approved for the rest of this session (``remember``), sorted."""
        return sorted(self.runner.remembered)

    def revoke_grant(self, tool: str) -> bool:
        """Withdraw a session grant: ``tool`` asks again from now on, also after a
        restart (durable: a ``grant_revoked`` record). ``False``: it was not granted."""
        return bool(self.runner.revoke([tool]))

    def stop(self) -> None:
        """The user's stop (Esc, SIGINT): ask the current run to stop (a no-op when
        idle) and hold the lane, so that queued and steered messages wait for "Resume
        queue" instead of running at once (thread-safe)."""
        if self._pending is not None:
            self._pending.hold()
        self.runner.stop()

    @property
    def busy(self) -> bool:
        return self.runner.busy

    def close(self) -> None:
        """``session_end`` (if this process resumed or created it), then release the
        checkpoint db and the lock."""
        try:
            if self.resumed:
                self.runner.end_session()
            self.runner.close()
        finally:
            self.writer.close()
