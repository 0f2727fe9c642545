"""The runner: drives the agent graph for one session and writes its log.

Operations are sync generators of events, used from a thread worker; ``stop`` is
thread-safe. Importing this module does not import LangGraph; the first run (or
:meth:`Runner.prepare`, e.g. in a warm-up worker) does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mttui.config import Settings
from mttui.session.records import new_id
from mttui.session.writer import SessionWriter

from .approvals import ApprovalLedger, decide
from .context import GraphContext, SteerSource, make_context
from .errors import ApprovalPendingError, RunnerError
from .events import ApprovalDecided, ApprovalRequested, MessageAdded, Notice, RunEvent, RunStarted
from .file_checkpoint import file_checkpoints
from .instructions import Announcer
from .journal import Journal, LogFacts, scan_log
from .live import LiveThread
from .redact import redact_prompt
from .tools.progress import ToolProgress

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.sqlite import SqliteSaver

    from mttui.session.service import SessionService

    from .mcp import McpManager
    from .state import AgentGraph, GraphInput

__all__ = ["ApprovalPendingError", "ModelFactory", "Runner", "RunnerError"]

ModelFactory = Callable[[Settings], "BaseChatModel"]


class Runner:
    """Runs turns of one open session; one run at a time; :meth:`stop` is thread-safe."""

    def __init__(
        self,
        writer: SessionWriter,
        settings: Settings,
        *,
        checkpoints_path: Path,
        project: Path | None = None,
        model_factory: ModelFactory | None = None,
        grace: float = 2.0,
    ) -> None:
        self.writer = writer
        self.settings = settings
        self.project = Path(project or writer.project).resolve()
        self.checkpoints_path = Path(checkpoints_path)
        self.grace = grace
        self._factory = model_factory
        self._stop = threading.Event()
        self._busy = threading.Lock()
        self._graph: AgentGraph | None = None
        self._saver: SqliteSaver | None = None
        self._ctx: GraphContext | None = None
        totals = writer.totals()  # from the index: no read of a long log
        facts = LogFacts.from_totals(totals) if totals is not None else scan_log(writer.path)
        self.journal = Journal(writer)
        self.journal.stats = facts.stats
        self.remembered: set[str] = set(facts.remembered)
        self.approvals = ApprovalLedger(written=set(facts.requests))
        self.steers: SteerSource | None = None  # see attach_steers
        snapshots = file_checkpoints(writer, self.project, self.checkpoints_path)
        self.journal.before_dispatch = snapshots.before_dispatch
        self.journal.activity = snapshots.repo.tool_running
        self._announcer = Announcer(self.project)  # the AGENTS.md files last announced
        self._mcp: McpManager | None = None  # the MCP servers, started by prepare()
        self.tool_progress: ToolProgress | None = None  # see attach_progress

    @classmethod
    def for_service(
        cls,
        service: SessionService,
        writer: SessionWriter,
        settings: Settings,
        *,
        model_factory: ModelFactory | None = None,
        grace: float = 2.0,
    ) -> Runner:
        """A runner on ``writer`` with the checkpoint db and project of ``service``."""
        return cls(writer, settings, checkpoints_path=service.checkpoints_path(),
                   project=service.project, model_factory=model_factory,
                   grace=grace)  # fmt: skip

    # -- setup -----------------------------------------------------------------
    def prepare(self) -> None:
        """Import LangGraph, build the model, open the checkpoint db (idempotent)."""
        if self._graph is not None:
            return
        from .agent import build_graph
        from .checkpoints import data_home, open_saver
        from .models import ModelConfigError, make_model

        try:
            raw = (self._factory or make_model)(self.settings)
        except ModelConfigError as exc:
            raise RunnerError(str(exc)) from None
        failures = self._ctx.compress_failures if self._ctx is not None else 0
        if self._mcp is None and self.settings.mcp_servers:  # started by the first model call
            from .mcp import McpManager

            self._mcp = McpManager(self.settings.mcp_servers, self.project)
        self._ctx = make_context(
            self.settings,
            raw,
            project=self.project,
            journal=self.journal,
            remembered=self.remembered,
            stop=self._stop,
            grace=self.grace,
            home=data_home(self.checkpoints_path),
            mcp=self._mcp,
        )
        self._ctx.compress_failures = failures  # the circuit breaker survives a model switch
        self._ctx.steers = self.steers
        self._ctx.tool_progress = self.tool_progress
        self._saver = open_saver(self.checkpoints_path)
        self._graph = build_graph(self._ctx, self._saver)

    @property
    def graph(self) -> AgentGraph:
        self.prepare()
        assert self._graph is not None
        return self._graph

    @property
    def config(self) -> RunnableConfig:
        if not self.writer.thread_id:
            raise RunnerError("this session has no thread id; it cannot continue execution")
        return {"configurable": {"thread_id": self.writer.thread_id}}

    @property
    def busy(self) -> bool:
        return self._busy.locked()

    def update_settings(self, settings: Settings) -> None:
        """New settings (model switch, approval mode…); the model is rebuilt on the next run."""
        if self.busy:
            raise RunnerError("cannot change settings while a run is active")
        self.settings = settings
        self.close()

    def set_approval_mode(self, mode: str) -> None:
        self.settings = self.settings.with_overrides(approval=mode)
        if self._ctx is not None:
            self._ctx.approval = mode

    # -- the public operations --------------------------------------------------
    def pending_approval(self) -> ApprovalRequested | None:
        """The approval the checkpoint waits for (asked again after a restart), if any."""
        ledger = self.approvals
        if ledger.known:
            return ledger.pending
        state = self.graph.get_state(self.config)
        ledger.pending = None
        for intr in state.interrupts or ():
            value = intr.value
            if isinstance(value, dict) and value.get("request_id"):
                ledger.pending = ApprovalRequested(
                    value["request_id"],
                    value.get("run_id") or "",
                    list(value.get("tool_calls") or []),
                    asked_again=True,
                )
                break
        ledger.known = True
        return ledger.pending

    def invalidate(self) -> None:
        """Forget cached execution state (call after changing the checkpoint directly)."""
        self.approvals.forget()

    def run(self, text: str, *, message_id: str | None = None,
            attachments: list[dict[str, Any]] | None = None,
            model_text: str | None = None) -> Iterator[RunEvent]:
        """One user turn. Raises :class:`ApprovalPendingError` while an approval waits.
        ``attachments`` (``@file``s) are logged on the message; the model gets
        ``model_text`` (the text with the files' blocks) instead of ``text``."""
        from .messages import new_message_id

        user: dict[str, Any] = {"id": message_id or new_message_id(), "role": "user",
                                "content": text, "status": "sent"}  # fmt: skip
        if attachments:
            user["attachments"] = attachments
        yield from self.run_messages([user], ("transcript_message", {"message": user}),
                                     model_text=model_text)  # fmt: skip

    def run_messages(
        self, users: list[dict[str, Any]], record: tuple[str, dict[str, Any]],
        model_text: str | None = None,
    ) -> Iterator[RunEvent]:
        """A turn on user messages that ``record`` writes (with ``run_start``, one fsync):
        ``transcript_message``, or a pending input's ``pending_take``/``pending_read``
        (``pending_runtime``). Nothing is written before the first event is yielded."""
        self._begin()
        from .agent import user_input
        from .pending_node import steer_message

        self.prepare()
        if self.pending_approval() is not None:
            raise ApprovalPendingError("an approval is pending: answer it before sending more")
        run_id = new_id("run")
        model_text, said = redact_prompt(self.context.redactor, users, model_text)  # in place
        graph_input = user_input(model_text or str(users[0]["content"]), str(users[0]["id"]),
                                 run_id)  # fmt: skip
        if record[0] == "pending_read":  # a batch of Steers: the model gets them as one
            graph_input["messages"] = [steer_message(u) for u in users]
        self.journal.stats.turns += 1
        head: list[tuple[str, dict[str, Any]]] = [("run_start", {"run_id": run_id}), record]
        first: list[RunEvent] = [*(Notice("warning", t) for t in said),
                                 *(MessageAdded(u) for u in users)]  # fmt: skip
        yield from self._drive(graph_input, run_id, head, first)

    def attach_progress(self, progress: ToolProgress | None) -> None:
        """Called with ``(call_id, tail)`` while a tool runs (live shell output)."""
        self.tool_progress = progress
        if self._ctx is not None:
            self._ctx.tool_progress = progress

    def attach_steers(self, source: SteerSource) -> None:
        """The pending inputs whose Steers the graph takes at its safe boundaries."""
        self.steers = source
        if self._ctx is not None:
            self._ctx.steers = source

    def answer_approval(
        self,
        request_id: str,
        decisions: dict[str, str],
        reason: str | None = None,
        remember: list[str] | None = None,
        *,
        recorded: bool = False,
    ) -> Iterator[RunEvent]:
        """Answer the pending approval (same ``request_id``) and continue the run.
        ``recorded``: the decision is in the log already (found there on resume)."""
        self._begin()
        self.prepare()
        from langgraph.types import Command

        pending = self.pending_approval()
        if pending is None or pending.request_id != request_id:
            raise RunnerError(f"no pending approval {request_id}")
        chosen = decide(pending, decisions, reason, remember)
        if not recorded:
            self.writer.append("approval_decision", **chosen.fields)
        self.remembered.update(chosen.remember)
        decided = ApprovalDecided(request_id, chosen.decisions, reason, chosen.remember)
        answer = {"request_id": request_id, "decisions": chosen.decisions, "reason": reason}
        resume: Command[str] = Command(resume=answer)
        run_id = pending.run_id or new_id("run")
        head: list[tuple[str, dict[str, Any]]] = [
            ("run_start", {"run_id": run_id, "continues": request_id})
        ]
        yield from self._drive(resume, run_id, head, [decided], before_start=True)

    def revoke(self, tools: Iterable[str]) -> list[str]:
        """Withdraw session grants: the tools ask again, now and after a restart (a
        ``grant_revoked`` record). Returns the tools that were granted."""
        gone = sorted(set(tools) & self.remembered)
        if gone:
            self.writer.append("grant_revoked", tools=gone)
            self.remembered.difference_update(gone)
        return gone

    def continue_run(self) -> Iterator[RunEvent]:
        """Go on from the checkpoint without new input: the run of an approval decided
        before the process stopped, whose approved calls were never dispatched (the
        resume plans it; see ``resume.md``)."""
        self._begin()
        self.prepare()
        run_id = str(self.graph.get_state(self.config).values.get("run_id") or new_id("run"))
        head: list[tuple[str, dict[str, Any]]] = [("run_start", {"run_id": run_id,
                                                                 "continues": True})]
        yield from self._drive(None, run_id, head, [])

    def compact(self, instructions: str | None = None) -> Iterator[RunEvent]:
        """Manual compression (``/compact``): yields ``Compressed``, or a ``Notice`` when
        there is nothing to compress. Raises :class:`RunnerError` when the summary fails
        (nothing is changed then) or while a run or an approval is pending."""
        from .compression.manual import compact_thread

        self._begin()
        self.prepare()
        if self.pending_approval() is not None:
            raise ApprovalPendingError("an approval is pending: answer it before compacting")
        if not self._busy.acquire(blocking=False):
            raise RunnerError("a run is already active in this session")
        try:
            yield from compact_thread(self._live(), instructions)
        finally:
            self._busy.release()

    @property
    def context(self) -> GraphContext:
        """The graph's context (prepared)."""
        self.prepare()
        assert self._ctx is not None
        return self._ctx

    def drive_from_checkpoint(self, run_id: str, head: list[tuple[str, dict[str, Any]]],
                              first: list[RunEvent]) -> Iterator[RunEvent]:
        """Write ``head`` and go on from the checkpoint as it stands (``graph.rerun``)."""
        self._begin()
        yield from self._drive(None, run_id, head, first)

    def _begin(self) -> None:
        if self.busy:
            raise RunnerError("a run is already active in this session")
        self._stop.clear()  # a stop from now on (even during the imports) counts

    def stop(self) -> None:
        """Ask the current run to stop (thread-safe; a no-op when idle)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def end_session(self) -> None:
        """Append ``session_end {stats}`` (totals of the whole session)."""
        if not self.writer.closed:
            self.writer.append("session_end", stats=self.journal.stats.as_json())

    def close(self) -> None:
        """Close the checkpoint connection (the writer stays the caller's)."""
        self.approvals.forget()
        if self._mcp is not None:
            self._mcp.close()
            self._mcp = None
        if self._saver is not None:
            self._saver.conn.close()
            self._saver = None
            self._graph = None

    # -- driving the graph ------------------------------------------------------
    def _live(self) -> LiveThread:
        """What one operation needs of the prepared graph (see :mod:`.live`)."""
        config = self.config  # no thread id: fail before anything is written
        graph = self.graph
        assert self._saver is not None and self._ctx is not None
        return LiveThread(graph, self._saver, self._ctx, self.writer,
                          config["configurable"]["thread_id"], self.approvals,
                          debug=self.settings.debug)  # fmt: skip

    def _instructions(self) -> Notice | None:
        """The system prompt with the ``AGENTS.md`` files as they are now; the "loaded"
        line when they changed since the last announcement (secrets in them redacted)."""
        assert self._ctx is not None
        prompt, line = self._announcer.refresh()
        self._ctx.system_prompt = self._ctx.redactor.text(prompt)
        return Notice("info", line) if line else None

    def _drive(
        self,
        graph_input: GraphInput,
        run_id: str,
        head: list[tuple[str, dict[str, Any]]],
        first: list[RunEvent],
        *,
        before_start: bool = False,
    ) -> Iterator[RunEvent]:
        from .run_loop import drive_recorded

        if not self._busy.acquire(blocking=False):
            raise RunnerError("a run is already active in this session")
        self.approvals.forget()
        try:
            live = self._live()
            loaded = self._instructions()
            if before_start:
                yield from first
            self.writer.append_many(head)
            yield RunStarted(run_id)
            if loaded is not None:
                yield loaded
            if not before_start:
                yield from first
            yield from drive_recorded(live, graph_input, run_id)
        except GeneratorExit:
            # The caller walked away mid-run: let the nodes wind down quickly. Nothing
            # is written here (a node thread may still be appending); iterate to the
            # end and use stop() instead.
            self._stop.set()
            raise
        finally:
            self._busy.release()
