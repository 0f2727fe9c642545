"""Checkpoints refer to their messages, stored once per thread (``checkpoint_messages``).

Before: every checkpoint (two per tool step) held the whole message list, so each step
wrote every earlier tool output again — bytes written per step grew with the run.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from mttui.graph.checkpoints import connect, open_saver, prune_thread
from mttui.graph.events import MessageAdded
from mttui.graph.message_saver import MessageSaver
from mttui.graph.resume.plan import graph_state
from mttui.session import checkpoint_store
from mttui.session.checkpoint_messages import REFS
from mttui.session.checkpoint_peek import peek_state
from tests.support import fake_openai as fo
from tests.support.inline_checkpoints import (
    CountingSerde,
    make_inline,
    message_rows,
    newest_blob_size,
)

STEPS = 10
OUTPUT = 24 * 1024


def _loop(project: Path, fake: fo.FakeOpenAI, steps: int, tag: str = "") -> None:
    for i in range(steps):
        (project / f"{tag}m{i}.py").write_text((f"x_{i} = '{tag}{i}'\n" * 2000)[:OUTPUT])
        fake.add(fo.tools([(f"call_{tag}{i}", "read_file", {"path": f"{tag}m{i}.py"})]))
    fake.add(fo.text("read them all"))


def test_bytes_stored_per_step_do_not_grow_with_the_run(
    make_runner: Any, project: Path, fake_openai: fo.FakeOpenAI
) -> None:
    _loop(project, fake_openai, STEPS)
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    db, tid = runner.checkpoints_path, ""
    blobs: list[int] = []
    stored: list[int] = []
    for event in runner.run("read every module"):
        if isinstance(event, MessageAdded) and event.message.get("role") == "tool":
            tid = runner.writer.thread_id
            blobs.append(newest_blob_size(db, tid))
            stored.append(sum(message_rows(db, tid).values()))
    assert len(blobs) == STEPS
    # The checkpoint row holds a 16-byte key per message, not the 24 KB outputs.
    assert max(blobs) < OUTPUT and max(blobs) - min(blobs) < 100 * STEPS, blobs
    # Each step adds its own messages once: about one output, whatever came before.
    growth = [b - a for a, b in zip(stored, stored[1:], strict=False)]
    assert all(0 < g < 2 * OUTPUT for g in growth), growth  # (read_file caps an output)
    assert max(growth) - min(growth) < 1000, growth
    state = runner.graph.get_state(runner.config).values
    assert len([m for m in state["messages"] if m.type == "tool"]) == STEPS
    # one row per message of the state, none missing, none left over
    assert len(message_rows(db, tid)) == len({m.id for m in state["messages"]})


def test_a_database_written_inline_keeps_working(
    make_runner: Any, project: Path, fake_openai: fo.FakeOpenAI
) -> None:
    _loop(project, fake_openai, 2)
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    list(runner.run("read"))
    before = [m.content for m in runner.graph.get_state(runner.config).values["messages"]]
    runner.close()
    db, tid = runner.checkpoints_path, runner.writer.thread_id
    assert make_inline(db) >= 1
    conn = sqlite3.connect(db)
    assert "checkpoint_messages" not in {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master")}  # fmt: skip
    conn.close()
    # read by the light reader and by LangGraph as before
    peeked = peek_state(db, tid)
    assert peeked is not None and len(peeked.values["messages"]) == len(before)  # type: ignore[arg-type]
    assert [m.content for m in graph_state(db, tid).values["messages"]] == before
    # and continued: the next checkpoint is in the new form, nothing lost
    _loop(project, fake_openai, 1, tag="n")
    list(runner.run("one more"))
    after = [m.content for m in runner.graph.get_state(runner.config).values["messages"]]
    assert after[: len(before)] == before and len(after) == len(before) + 4
    found = checkpoint_store.newest_checkpoint(db, tid)
    assert found is not None and len(found[2]) == len(after)
    assert len(message_rows(db, tid)) == len(after)


def _put(saver: Any, thread: str, parent: str | None, messages: list[Any], ns: str = "") -> str:
    ckpt = empty_checkpoint()
    ckpt["channel_values"] = {"messages": messages}
    conf = {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": parent}}
    return str(saver.put(conf, ckpt, {"step": 0}, {})["configurable"]["checkpoint_id"])


def _msg(i: int) -> Any:
    return HumanMessage(f"message {i} " * 50, id=f"m{i}")


def test_prune_drops_only_messages_no_checkpoint_refers_to(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    saver = open_saver(db)
    try:
        m = [_msg(i) for i in range(6)]
        first = _put(saver, "t", None, [m[0], m[1], m[2]])
        _put(saver, "t", first, [m[0], m[2], m[3]])  # m1 dropped (e.g. compressed away)
        _put(saver, "t", None, [m[0], m[4]], ns="sub")  # another namespace keeps m4
        _put(saver, "u", None, [m[1], AIMessage("same text, other thread", id="a")])
        assert len(message_rows(db, "t")) == 5
        assert prune_thread(saver, "t") == 1
        keys = message_rows(db, "t")
        assert len(keys) == 4  # m0, m2, m3 (newest) and m4 (the other namespace)
        state = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert [x.id for x in state.checkpoint["channel_values"]["messages"]] == ["m0", "m2",
                                                                                    "m3"]
        assert len(message_rows(db, "u")) == 2  # the other thread's copy of m1 stays
        # a checkpoint that refers to nothing new frees nothing it still needs
        _put(saver, "t", None, [m[0], m[2], m[3], m[5]])
        prune_thread(saver, "t")
        assert len(message_rows(db, "t")) == 5
        row = saver.conn.execute("SELECT checkpoint FROM checkpoints WHERE thread_id = 't' "
                                 "AND checkpoint_ns = ''").fetchone()  # fmt: skip
        assert REFS.encode() in row[0] and b"message 5" not in row[0]
    finally:
        saver.conn.close()


def test_deleting_a_thread_deletes_its_messages(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    saver = open_saver(db)
    try:
        _put(saver, "t", None, [_msg(1)])
        _put(saver, "u", None, [_msg(1)])
        saver.delete_thread("t")
        assert message_rows(db, "t") == {} and len(message_rows(db, "u")) == 1
    finally:
        saver.conn.close()
    checkpoint_store.delete_threads(db, ["u"])
    assert message_rows(db, "u") == {}


def test_a_step_serializes_only_its_new_messages(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    counted = CountingSerde()
    saver = MessageSaver(connect(db), serde=counted)
    saver.setup()
    try:
        history = [_msg(i) for i in range(50)]
        parent = _put(saver, "t", None, history)
        counted.calls = 0
        parent = _put(saver, "t", parent, [*history, _msg(50)])
        assert counted.calls == 2  # the new message and the checkpoint itself
        # read back (as a new run does): what it read is known to be stored too
        found = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        counted.calls = 0
        _put(saver, "t", parent, [*found.checkpoint["channel_values"]["messages"], _msg(51)])
        assert counted.calls == 2
    finally:
        saver.conn.close()


def test_messages_pruned_by_another_connection_are_written_again(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    ours, theirs = open_saver(db), open_saver(db)
    try:
        m = [_msg(i) for i in range(3)]
        first = _put(ours, "t", None, m)
        _put(theirs, "t", first, [m[0]])  # e.g. another process compressed the thread
        prune_thread(theirs, "t")
        assert len(message_rows(db, "t")) == 1
        _put(ours, "t", first, m)  # the same objects: they must be stored again
        prune_thread(ours, "t")
        found = theirs.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert [x.id for x in found.checkpoint["channel_values"]["messages"]] == ["m0", "m1",
                                                                                    "m2"]
    finally:
        ours.conn.close()
        theirs.conn.close()


def test_a_failed_put_leaves_no_message_behind(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "checkpoints.sqlite"
    saver = open_saver(db)
    try:
        first = _put(saver, "t", None, [_msg(0)])

        def full(*_a: Any, **_k: Any) -> Any:
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(SqliteSaver, "put", full)
        with pytest.raises(sqlite3.OperationalError):
            _put(saver, "t", first, [_msg(0), _msg(1)])
        monkeypatch.undo()
        assert len(message_rows(db, "t")) == 1  # m1 went with its checkpoint
        _put(saver, "t", first, [_msg(0), _msg(1)])  # and is written when it succeeds
        assert len(message_rows(db, "t")) == 2
    finally:
        saver.conn.close()


def test_a_missing_message_row_is_an_unreadable_checkpoint_not_a_shorter_one(
    make_runner: Any, project: Path, fake_openai: fo.FakeOpenAI
) -> None:
    _loop(project, fake_openai, 1)
    runner = make_runner("openai", url=fake_openai.url, approval="ask")
    list(runner.run("read"))
    runner.close()
    db, tid = runner.checkpoints_path, runner.writer.thread_id
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM checkpoint_messages WHERE rowid = (SELECT max(rowid) FROM "
                 "checkpoint_messages)")  # fmt: skip
    conn.commit()
    conn.close()
    assert peek_state(db, tid) is None  # the light reader leaves it to LangGraph
    with pytest.raises(LookupError, match="missing from the checkpoint database"):
        graph_state(db, tid)
