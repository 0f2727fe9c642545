"""Checkpoints: private file, bounded per thread, resume still works after pruning."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from mttui.graph.checkpoints import checkpoint_count
from mttui.graph.events import ApprovalRequested


def test_checkpoint_db_is_private_and_wal(make_runner: Any) -> None:
    runner = make_runner()
    list(runner.run("hi"))
    path = runner.checkpoints_path
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_only_the_newest_checkpoint_of_a_thread_is_kept(make_runner: Any, project: Path) -> None:
    other = make_runner()
    list(other.run("another session in the same project"))
    runner = make_runner(approval="yolo")
    for i in range(5):
        list(runner.run(f"!echo {i}"))
        assert checkpoint_count(runner._saver, runner.writer.thread_id) == 1
    # the other thread is untouched by this one's pruning
    assert checkpoint_count(runner._saver, other.writer.thread_id) == 1
    state = runner.graph.get_state(runner.config)
    assert len(state.values["messages"]) == 5 * 4  # user, call, result, answer per turn
    assert [m.content for m in state.values["messages"] if m.type == "tool"] == [
        f"{i}\n" for i in range(5)
    ]


def test_pending_approval_survives_pruning(make_runner: Any, project: Path) -> None:
    runner = make_runner()
    for i in range(3):
        events = list(runner.run(f"/read missing{i}.txt"))
        assert events[-1].status == "completed"
    events = list(runner.run("!echo pruned-but-pending > p.txt"))
    request = next(e for e in events if isinstance(e, ApprovalRequested))
    assert checkpoint_count(runner._saver, runner.writer.thread_id) == 1
    runner.close()  # a fresh connection sees the same single checkpoint with its interrupt
    pending = runner.pending_approval()
    assert pending is not None and pending.request_id == request.request_id
    cid = pending.tool_calls[0]["call_id"]
    assert list(runner.answer_approval(pending.request_id, {cid: "approve"}))[-1].status == (
        "completed"
    )
    assert (project / "p.txt").read_text() == "pruned-but-pending\n"
