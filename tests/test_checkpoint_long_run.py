"""A long tool loop keeps the checkpoint database bounded while it runs.

Before: every step added ~5 checkpoints, each carrying the whole state plus a copy
of every tool output of the run (``completed_tool_calls``), pruned only at the end
of the run — one 49-step run left a 233 MB file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from mttui.graph.events import MessageAdded
from tests.support import fake_openai as fo

STEPS = 12


def _count(path: Path, thread_id: str) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0])  # fmt: skip
    finally:
        conn.close()


def test_checkpoints_stay_few_during_a_long_tool_loop(
    make_runner: Any, project: Path, fake_openai: fo.FakeOpenAI
) -> None:
    for i in range(STEPS):
        (project / f"m{i}.py").write_text(f"x_{i} = {i}\n" * 800)
        fake_openai.add(fo.tools([(f"call_{i}", "read_file", {"path": f"m{i}.py"})]))
    fake_openai.add(fo.text("read them all"))
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    seen: list[int] = []
    for event in runner.run("read every module"):
        if isinstance(event, MessageAdded) and event.message.get("role") == "tool":
            seen.append(_count(runner.checkpoints_path, runner.writer.thread_id))
    assert len(seen) == STEPS
    # Not one state per node per step: a handful at any moment, whatever the step.
    assert max(seen) <= 6, seen
    state = runner.graph.get_state(runner.config).values
    assert len([m for m in state["messages"] if m.type == "tool"]) == STEPS
    done = state["completed_tool_calls"]
    assert [c["call_id"] for c in done] == [f"call_{i}" for i in range(STEPS)]
    assert all("result" not in c and "arguments" not in c for c in done)


def test_space_freed_by_pruning_is_given_back(make_runner: Any) -> None:
    runner = make_runner()
    list(runner.run("hi"))
    with sqlite3.connect(runner.checkpoints_path) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] <= 2
