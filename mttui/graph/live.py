"""The open thread as one operation of the runner sees it.

The runner builds a :class:`LiveThread` for each run or compaction and hands it
to the modules that drive the graph (``run_loop``, ``compression.manual``), so
they need nothing else from the runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mttui.session.writer import SessionWriter

from .approvals import ApprovalLedger
from .checkpoints import prune_thread
from .context import GraphContext
from .journal import Journal

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.sqlite import SqliteSaver

    from .state import AgentGraph


@dataclass(frozen=True)
class LiveThread:
    """The compiled graph on its checkpoint saver, the thread's config and the log."""

    graph: AgentGraph
    saver: SqliteSaver
    ctx: GraphContext
    writer: SessionWriter
    thread_id: str
    approvals: ApprovalLedger
    debug: bool = False  # print the traceback of a failed run

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id}}

    @property
    def journal(self) -> Journal:
        return self.ctx.run_journal

    @property
    def stopping(self) -> bool:
        return self.ctx.stop.is_set()

    def prune(self) -> str | None:
        """Drop the thread's old checkpoints; a failure is reported, never raised."""
        try:
            if self.writer.thread_id:
                prune_thread(self.saver, self.writer.thread_id)
        except Exception as exc:  # pruning is housekeeping; never fail a run for it
            return f"could not prune old checkpoints: {exc}"
        return None
