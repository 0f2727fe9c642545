"""The agent graph's state (what each checkpoint holds) and the types of the graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

if TYPE_CHECKING:
    from typing import TypeAlias

    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Command


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    pending_tool_calls: list[dict[str, Any]]
    completed_tool_calls: list[dict[str, Any]]
    approval_requests: list[dict[str, Any]]
    needs_human_approval: bool
    run_id: str
    step_count: int
    stop_reason: str | None  # None | stopped | step_limit | error
    error: str | None


class Node(Protocol):
    """A node of the agent graph: the state in, the update out."""

    def __call__(self, state: AgentState) -> dict[str, Any]: ...


if TYPE_CHECKING:
    AgentGraph: TypeAlias = CompiledStateGraph[AgentState, None, AgentState, AgentState]
    # a new turn, the answer that resumes an interrupt, or None: go on from the checkpoint
    GraphInput: TypeAlias = AgentState | Command[str] | None
