"""What the graph's nodes use from the process (never checkpointed).

Nodes are closures over one :class:`GraphContext`: the model, the journal, the
stop flag and the source of Steers live here, not in the checkpoint.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .events import Emit
from .journal import Journal
from .redact import Redactor
from .tools.progress import ToolProgress
from .tools.rule_source import RuleSource
from .tools.sandbox import Sandbox

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable

    from mttui.config import Settings

    from .mcp import McpManager

    ChatRunnable = Runnable[LanguageModelInput, BaseMessage]


class SteerSource(Protocol):
    """The pending inputs whose Steers the graph takes at its safe boundaries."""

    def waiting(self) -> bool:
        """Whether an unread Steer waits."""
        ...

    def take(self, emit: Emit, run_id: str | None = None) -> list[dict[str, Any]]:
        """Take every unread Steer as one batch (recorded, emitted); the messages."""
        ...


@dataclass
class GraphContext:
    """Process-side things the nodes use (never checkpointed)."""

    model: ChatRunnable | None  # the chat model with the tools bound (None: read-only graph)
    project: Path
    journal: Journal | None  # None: a read-only graph that runs no node
    system_prompt: str
    approval: str = "ask"
    max_steps: int = 50
    grace: float = 2.0
    base_url: str | None = None
    remembered: set[str] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)
    summarizer: BaseChatModel | None = None  # the model without tools, for summaries
    token_limit: int = 128_000
    compression_threshold: float = 0.5
    auto_compress: bool = True
    compress_failures: int = 0
    steers: SteerSource | None = None  # Steers join at safe boundaries (pending_node)
    redactor: Redactor = field(default_factory=Redactor.from_env)  # secrets read once per run
    tool_progress: ToolProgress | None = None  # (call_id, capped tail) while a tool runs
    price: tuple[float, float] | None = None  # $ per million input/output tokens (run_end)
    rules: RuleSource | None = None  # permission rules (config + the project's saved ones)
    sandbox: Sandbox | None = None  # shell calls under bwrap (auto-edit runs them unasked)
    sandbox_noticed: bool = False  # the "sandbox off" notice was given (once per runner)
    rules_warned: set[str] = field(default_factory=set)  # rule-file problems said already
    mcp: McpManager | None = None  # the MCP servers (started by the first model call)
    mcp_bound: bool = False  # their tools are bound to the model
    risks: dict[str, str] = field(default_factory=dict)  # risk levels of extra (MCP) tools

    def ensure_tools(self) -> None:
        """Before a model call: start the MCP servers (once; a run needs tools now)
        and bind their tools to the model with the built-in ones."""
        if self.mcp is None or self.mcp_bound or self.summarizer is None:
            return
        from .tools import TOOL_SCHEMAS

        self.mcp.start()
        self.model = self.summarizer.bind_tools([*TOOL_SCHEMAS, *self.mcp.schemas()])
        self.risks = self.mcp.risks()
        self.mcp_bound = True

    @property
    def sandboxed(self) -> bool:
        """Shell commands really run in the sandbox (bwrap set and working)."""
        return self.sandbox is not None and self.sandbox.active and (
            self.sandbox.problem() is None)

    @property
    def tool_model(self) -> ChatRunnable:
        """The model with the tools bound, in a context whose graph runs nodes."""
        assert self.model is not None, "a read-only graph runs no node"
        return self.model

    @property
    def run_journal(self) -> Journal:
        """The journal, in a context whose graph runs nodes."""
        assert self.journal is not None, "a read-only graph runs no node"
        return self.journal

    @property
    def summary_model(self) -> BaseChatModel:
        """The model that writes compression summaries, in a context that runs nodes."""
        assert self.summarizer is not None, "a read-only graph runs no node"
        return self.summarizer


def make_context(
    settings: Settings,
    raw_model: BaseChatModel,
    *,
    project: Path,
    journal: Journal,
    remembered: set[str],
    stop: threading.Event,
    grace: float,
    home: Path | None = None,
    mcp: McpManager | None = None,
) -> GraphContext:
    """The context of one runner: ``raw_model`` gets the tools bound; settings are copied."""
    from mttui.config import price_of

    from .prompt import system_prompt
    from .tools import TOOL_SCHEMAS

    return GraphContext(
        model=raw_model.bind_tools(TOOL_SCHEMAS), summarizer=raw_model, project=project,
        journal=journal, system_prompt=system_prompt(project), approval=settings.approval,
        max_steps=settings.max_steps_per_run, grace=grace, base_url=settings.base_url,
        remembered=remembered, stop=stop, token_limit=settings.token_limit,
        compression_threshold=settings.compression_threshold,
        auto_compress=settings.auto_compress,
        redactor=Redactor.from_env(also={"OPENAI_API_KEY": settings.api_key}),
        price=price_of(settings),
        rules=RuleSource.for_project(settings.permissions_allow, settings.permissions_deny,
                                     home, project),
        sandbox=Sandbox(settings.sandbox, settings.sandbox_network,
                        protect=(home,) if home is not None else ()),
        mcp=mcp,
    )  # fmt: skip
