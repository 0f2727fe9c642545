"""B6R: one long tool loop — 50 model steps, each reading a different 24 KB file.

What a user feels in a long agent run: the checkpoint database must not grow with
the square of the run (every checkpoint used to carry all the run's tool outputs,
and pruning happened only at the end). Baseline: a bare LangGraph loop —
``add_messages`` + a tool node + ``SqliteSaver`` with ``durability="sync"`` — on
the same scripted model and files. Reported: the database size after the run and
the bytes written by the process during it (``wchar``: log and index included
for mttui), and how the bytes written by one tool step late in the run compare to
those of one early on (O(step): the same; the bare loop rewrites every earlier
output in each checkpoint).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B6R"
KB = 1024


def _written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def _db_size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _files(project: Path, steps: int) -> None:
    project.mkdir(parents=True, exist_ok=True)
    for i in range(steps):
        line = f"def handler_{i}(request):  # 日志 {i}\n    return request.body[:{i}]\n"
        (project / f"m{i}.py").write_text((line * 1000)[: 24 * KB])


def _loop_model(steps: int) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Loop(BaseChatModel):
        """Reads ``m0.py`` … ``m{steps-1}.py``, one per step, then answers."""

        @property
        def _llm_type(self) -> str:
            return "bench-loop"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kw: Any) -> ChatResult:
            done = sum(1 for m in messages if m.type == "tool")
            if done < steps:
                call = {"id": f"call_{done}", "name": "read_file",
                        "args": {"path": f"m{done}.py"}}
                msg = AIMessage("", tool_calls=[call])
            else:
                msg = AIMessage("all files read")
            msg.usage_metadata = {"input_tokens": 10, "output_tokens": 10,  # type: ignore[assignment]
                                  "total_tokens": 20}
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return Loop()


def _baseline(root: Path, steps: int) -> tuple[int, int, float, float]:
    from typing import Annotated, TypedDict

    from langchain_core.messages import AnyMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    from mttui.graph.checkpoints import connect

    project = root / "project"
    _files(project, steps)
    model = _loop_model(steps)
    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages]})  # noqa: UP013

    def reasoning(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: Any) -> dict[str, Any]:
        out = []
        for call in state["messages"][-1].tool_calls:
            text = (project / call["args"]["path"]).read_text()
            out.append(ToolMessage(text, tool_call_id=call["id"], name=call["name"]))
        return {"messages": out}

    def route(state: Any) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    g = StateGraph(State)
    g.add_node("reasoning", reasoning)
    g.add_node("tools", tools)
    g.add_edge(START, "reasoning")
    g.add_conditional_edges("reasoning", route, ["tools", END])
    g.add_edge("tools", "reasoning")
    path = root / "baseline.sqlite"
    saver = SqliteSaver(connect(path))
    graph = g.compile(checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "bench"}, "recursion_limit": 4 * steps + 10}
    marks: list[int] = []
    before, start = _written(), time.perf_counter()
    for update in graph.stream({"messages": [HumanMessage("read every file")]}, cfg,
                               durability="sync", stream_mode="updates"):
        if "tools" in update:
            marks.append(_written())
    seconds, written = time.perf_counter() - start, _written() - before
    saver.conn.close()
    return _db_size(path), written, seconds, _growth(marks)


def _growth(marks: list[int]) -> float:
    """Bytes written by a tool step late in the run over those of one early on: the
    median of the last fifth of the steps over that of the first fifth (medians: the
    WAL's occasional copy into the database lands on one step)."""
    per_step = [b - a for a, b in zip(marks, marks[1:], strict=False)]
    k = max(1, len(per_step) // 5)
    return statistics.median(per_step[-k:]) / max(1, statistics.median(per_step[:k]))


def _ours(root: Path, steps: int) -> tuple[int, int, float, bool, float]:
    from mttui.config import Settings
    from mttui.graph.runner import Runner
    from mttui.session.service import SessionService

    project = root / "project"
    _files(project, steps)
    service = SessionService(root / "home", project)
    settings = Settings(provider="offline", model="bench", auto_compress=False,
                        max_steps_per_run=steps + 5)
    writer = service.create_session(provider="offline", model="bench")
    runner = Runner(writer, settings, checkpoints_path=service.checkpoints_path(),
                    project=project, model_factory=lambda _s: _loop_model(steps))
    from mttui.graph.events import MessageAdded

    marks: list[int] = []
    events = []
    before, start = _written(), time.perf_counter()
    for event in runner.run("read every file"):
        events.append(event)
        if isinstance(event, MessageAdded) and event.message.get("role") == "tool":
            marks.append(_written())
    seconds, written = time.perf_counter() - start, _written() - before
    ok = events[-1].status == "completed"
    state = runner.graph.get_state(runner.config)
    ok = ok and len(state.values["messages"]) == 2 * steps + 2
    runner.close()
    writer.close()
    return _db_size(service.checkpoints_path()), written, seconds, ok, _growth(marks)


def run(ctx: Context) -> list[Row]:
    steps = 50 if ctx.size == "full" else 20
    root = ctx.root / "b6r"
    base_size, base_written, base_s, base_growth = _baseline(root / "baseline", steps)
    size, written, seconds, ok, growth = _ours(root / "ours", steps)
    label = f"B6R one run of {steps} tool steps, 24 KB outputs"
    mb = 1e6
    return [
        Row(f"{label}: checkpoint db", f"{base_size / mb:,.1f} MB", f"{size / mb:,.2f} MB",
            f"{base_size / size:,.1f}× smaller", "bounded by the run's text, not its square",
            ok and size <= 4 * steps * 24 * KB),
        Row(f"{label}: bytes written", f"{base_written / mb:,.1f} MB", f"{written / mb:,.1f} MB",
            f"{base_written / max(written, 1):,.1f}× less", "—", None),
        Row(f"{label}: bytes written per step, late ÷ early (medians, last and first fifth)",
            f"{base_growth:,.1f}×", f"{growth:,.2f}×", "—",
            "O(step): the same late as early (≤ 1.5×)", growth <= 1.5),
        Row(f"{label}: run time", fmt_time(base_s), fmt_time(seconds),
            f"{seconds / base_s:,.2f}× the bare loop", "—", None),
    ]  # fmt: skip
