"""B14: the durability cost of one tool step, against a bare LangGraph agent.

A 20-call tool loop (``read_file`` of 2 KB files) through the scripted
OpenAI-compatible server, timed three ways on the same server in the same run:
a plain loop (``ChatOpenAI`` + tool calls, nothing stored), a bare LangGraph
ReAct agent with ``SqliteSaver`` (no journal, no index), and mttui's runner
(journal, index, approvals, pruning). Reported per step.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from tests.support import fake_openai as fo

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B14"
STEPS = 20


def _script(server: fo.FakeOpenAI) -> None:
    for i in range(STEPS):
        server.add(fo.tools([(f"call_{i}", "read_file", {"path": f"m{i}.py"})], usage=None))
    server.add(fo.text("done", usage=None))


def _files(project: Path) -> None:
    project.mkdir(parents=True, exist_ok=True)
    for i in range(STEPS):
        (project / f"m{i}.py").write_text((f"def f{i}(x):\n    return x + {i}\n" * 80)[:2048])


def _chat(url: str, fast: bool = False) -> Any:
    from langchain_openai import ChatOpenAI

    from mttui.graph.models.payload import fast_chat_openai

    # ``fast``: mttui's client class (messages and tools sent without the openai client's
    # parameter walk), so that the row compares durability and nothing else
    cls = fast_chat_openai() if fast else ChatOpenAI
    return cls(model="bench", base_url=url, api_key="bench", max_retries=0,  # type: ignore[arg-type]
               streaming=True)


def _read_tool(project: Path) -> Any:
    from langchain_core.tools import tool

    @tool
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return (project / path).read_text()

    return read_file


def _plain(url: str, project: Path) -> float:
    from langchain_core.messages import HumanMessage, ToolMessage

    tool = _read_tool(project)
    model = _chat(url).bind_tools([tool])
    messages: list[Any] = [HumanMessage("read every module")]
    start = time.perf_counter()
    while True:
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            out = tool.invoke(call["args"])
            messages.append(ToolMessage(out, tool_call_id=call["id"]))
    return time.perf_counter() - start


def _bare(url: str, project: Path, db: Path, tuned: bool = False, fast: bool = False) -> float:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.prebuilt import create_react_agent

    from mttui.graph.checkpoints import connect


    # LangGraph's documented set-up: a plain connection with SQLite's defaults; ``tuned``:
    # the connection settings mttui uses (WAL, synchronous=NORMAL), for a like-for-like view.
    saver = SqliteSaver(connect(db) if tuned else sqlite3.connect(str(db), check_same_thread=False))
    agent = create_react_agent(_chat(url, fast), [_read_tool(project)], checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "bench"}}
    start = time.perf_counter()
    agent.invoke({"messages": [HumanMessage("read every module")]}, cfg, durability="sync")
    seconds = time.perf_counter() - start
    saver.conn.close()
    return seconds


def _ours(url: str, project: Path, home: Path) -> float:
    from mttui.config import load_settings
    from mttui.graph.runner import Runner
    from mttui.session.service import SessionService

    service = SessionService(home, project)
    settings = load_settings({"provider": "openai", "base_url": url, "api_key": "bench",
                              "model": "bench", "approval": "ask"})
    settings = settings.with_overrides(max_retries=0)
    writer = service.create_session(provider="openai", model="bench")
    runner = Runner(writer, settings, checkpoints_path=service.checkpoints_path(),
                    project=project)
    runner.prepare()  # the model client and the graph, built once per session (like the bare one)
    start = time.perf_counter()
    events = list(runner.run("read every module"))
    seconds = time.perf_counter() - start
    assert events[-1].status == "completed", events[-1]
    runner.close()
    writer.close()
    return seconds


def _signed(seconds: float) -> str:
    return ("+" if seconds >= 0 else "−") + fmt_time(abs(seconds))


def run(ctx: Context) -> list[Row]:
    repeats = 7 if ctx.size == "full" else 3
    root = ctx.root / "b14"
    project = root / "project"
    _files(project)
    server = fo.FakeOpenAI()
    plain: list[float] = []
    bare: list[float] = []
    tuned: list[float] = []
    fast: list[float] = []
    ours: list[float] = []
    try:
        for r in range(repeats + 1):  # the first round warms imports and connections
            _script(server)
            p = _plain(server.url, project)
            _script(server)
            b = _bare(server.url, project, root / f"bare{r}.sqlite")
            _script(server)
            t = _bare(server.url, project, root / f"tuned{r}.sqlite", tuned=True)
            _script(server)
            f = _bare(server.url, project, root / f"fast{r}.sqlite", tuned=True, fast=True)
            _script(server)
            o = _ours(server.url, project, root / f"home{r}")
            if r:
                plain.append(p / STEPS)
                bare.append(b / STEPS)
                tuned.append(t / STEPS)
                fast.append(f / STEPS)
                ours.append(o / STEPS)
    finally:
        server.close()
    p, b, t, f, o = (statistics.median(x) for x in (plain, bare, tuned, fast, ours))
    return [
        Row(f"B14 one tool step, {STEPS}-call loop (plain loop: {fmt_time(p)})", fmt_time(b),
            fmt_time(o), f"{_signed(o - b)} ({o / b:.2f}×)", "≤ +3 ms over the bare agent",
            o - b <= 0.003),
        Row("B14 (info) the same, bare agent on mttui's connection settings (WAL, NORMAL)",
            fmt_time(t), fmt_time(o), f"{_signed(o - t)} ({o / t:.2f}×)", "—", None),
        Row("B14 (info) the same, and mttui's model client (no openai parameter walk): "
            "durability alone", fmt_time(f), fmt_time(o), f"{_signed(o - f)} ({o / f:.2f}×)",
            "—", None),
    ]  # fmt: skip
