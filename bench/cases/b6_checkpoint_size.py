"""B6: checkpoint database size of one long thread (300 turns of 1 KB messages).

Baseline: plain LangGraph — ``add_messages`` + ``SqliteSaver`` + ``durability="sync"``,
one node answering 1 KB. Ours: the real runner (journal, approvals, pruning) with a
model giving the same 1 KB answers. Afterwards resume must still work: the last
turn asks for approval, a fresh runner finds it and answers it.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B6"
KB = 1024


def _db_size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _user(i: int) -> str:
    return (f"turn {i}: " + "please look at the parser again " * 40)[:KB]


def _reply_model() -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Reply(BaseChatModel):
        """1 KB answers; a message starting with ``!`` gets one shell call."""

        @property
        def _llm_type(self) -> str:
            return "bench-reply"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kw: Any) -> ChatResult:
            last = str(messages[-1].content)
            if messages[-1].type == "human" and last.startswith("!"):
                call = {"id": f"call_{len(messages)}", "name": "shell",
                        "args": {"command": last[1:]}}
                msg = AIMessage("", tool_calls=[call])
            else:
                msg = AIMessage(("answer " + last)[:KB].ljust(KB, "."))
            usage = {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20}
            msg.usage_metadata = usage  # type: ignore[assignment]
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return Reply()


def _baseline(path: Path, turns: int) -> tuple[int, list[float]]:
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    from mttui.graph.checkpoints import connect

    # functional form: the annotations must be real objects, not strings
    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages]})  # noqa: UP013

    def reasoning(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(("answer " + str(state["messages"][-1].content))[:KB])]}

    g = StateGraph(State)
    g.add_node("reasoning", reasoning)
    g.add_edge(START, "reasoning")
    g.add_edge("reasoning", END)
    saver = SqliteSaver(connect(path))
    graph = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "bench"}}
    times = []
    for i in range(turns):
        start = time.perf_counter()
        graph.invoke({"messages": [HumanMessage(_user(i))]}, cfg, durability="sync")
        times.append(time.perf_counter() - start)
    saver.conn.close()
    return _db_size(path), times


def _ours(root: Path, turns: int) -> tuple[int, list[float], bool]:
    from mttui.config import Settings
    from mttui.graph.runner import Runner
    from mttui.session.service import SessionService

    project = root / "project"
    project.mkdir(parents=True)
    service = SessionService(root / "home", project)
    # no compression: the point is the growth of one uncompressed thread
    settings = Settings(provider="offline", model="bench", auto_compress=False)
    writer = service.create_session(provider="offline", model="bench")

    def runner_on(w: Any) -> Runner:
        return Runner(w, settings, checkpoints_path=service.checkpoints_path(), project=project,
                      model_factory=lambda _s: _reply_model())

    runner = runner_on(writer)
    times = []
    for i in range(turns - 1):
        start = time.perf_counter()
        events = list(runner.run(_user(i)))
        times.append(time.perf_counter() - start)
        assert events[-1].status == "completed"
    assert list(runner.run("!echo resumed"))[-1].status == "awaiting_approval"
    runner.close()
    path = writer.path
    writer.close()
    size = _db_size(service.checkpoints_path())
    # resume still works: a new runner (new connection) finds the approval and goes on
    with service.open_session(path) as again:
        other = runner_on(again)
        pending = other.pending_approval()
        ok = pending is not None
        if pending is not None:
            cid = pending.tool_calls[0]["call_id"]
            end = list(other.answer_approval(pending.request_id, {cid: "approve"}))[-1]
            state = other.graph.get_state(other.config)
            ok = end.status == "completed" and len(state.values["messages"]) == 2 * turns + 2
        other.close()
    return size, times, ok


def run(ctx: Context) -> list[Row]:
    turns = 300 if ctx.size == "full" else 100
    root = ctx.root / "b6"
    root.mkdir(parents=True, exist_ok=True)
    base_size, base_times = _baseline(root / "baseline.sqlite", turns)
    size, times, resumed = _ours(root / "ours", turns)
    ratio = base_size / size
    label = f"B6 checkpoint db, {turns} turns of 1 KB messages"
    met = size <= 10 * 1e6 and (ratio >= 30 or turns < 300)
    target = "≤ 10 MB, ≥ 30× smaller" + ("" if turns >= 300 else " (at 300 turns)")
    return [
        Row(label, f"{base_size / 1e6:,.1f} MB", f"{size / 1e6:,.2f} MB", f"{ratio:,.0f}× smaller",
            target, met and resumed),
        Row(f"B6 (info) turn time, last 20 of {turns} (resume after prune: "
            f"{'ok' if resumed else 'FAILED'})",
            fmt_time(statistics.median(base_times[-20:])), fmt_time(statistics.median(times[-20:])),
            "—", "—", None),
    ]  # fmt: skip
