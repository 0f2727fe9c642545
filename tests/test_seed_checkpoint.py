"""The seeded thread's checkpoint, written without the messages reducer, is the one
``update_state`` with every message makes (real LangGraph, SqliteSaver)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mttui.config import load_settings
from mttui.graph.agent import build_graph
from mttui.graph.checkpoints import open_saver
from mttui.graph.context import make_context
from mttui.graph.journal import Journal
from mttui.graph.models.offline import OfflineChatModel
from mttui.graph.seed import seed_thread, view_messages
from mttui.session.service import SessionService

VIEW = [
    {"id": "msg-1", "role": "user", "content": "hi"},
    {"id": "msg-2", "role": "assistant", "content": "",
     "tool_calls": [{"id": "c1", "name": "read_file", "args": {"p": "a"}}]},
    {"id": "msg-3", "role": "tool", "content": "a", "tool_call_id": "c1", "name": "read_file"},
    {"id": "msg-4", "role": "assistant", "content": "done"},
]


def _shape(saver: Any, thread: str) -> dict[str, Any]:
    found = saver.get_tuple({"configurable": {"thread_id": thread}})
    cp = found.checkpoint
    return {
        "values": {k: ([m.model_dump() for m in v] if k == "messages" else v)
                   for k, v in cp["channel_values"].items()},
        "versions": {k: v.split(".")[0] for k, v in cp["channel_versions"].items()},
        "seen": cp["versions_seen"], "metadata": found.metadata,
        "parent": found.parent_config, "writes": found.pending_writes,
        "count": saver.conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?",
                                    (thread,)).fetchone()[0],
    }


def test_seeded_checkpoint_equals_update_state(service: SessionService, project: Path) -> None:
    settings = load_settings({"provider": "offline"})
    writer = service.create_session(provider="offline", model="m", title=None)
    path = service.layout.checkpoints_path(service.resolve(writer.session_id).project_hash)
    messages = view_messages("earlier", VIEW)
    try:
        seed_thread(writer, settings, project=project, checkpoints_path=path,
                    messages=messages, thread_id="thread-seeded")
        ctx = make_context(settings, OfflineChatModel(), project=project,
                           journal=Journal(writer), remembered=set(),
                           stop=threading.Event(), grace=0.0)
        saver = open_saver(path)
        graph = build_graph(ctx, saver)
        graph.update_state(
            {"configurable": {"thread_id": "thread-reduced"}},
            {"messages": messages, "pending_tool_calls": [], "completed_tool_calls": [],
             "approval_requests": [], "needs_human_approval": False, "step_count": 0,
             "stop_reason": "stopped", "run_id": ""},
            as_node="observation",
        )  # fmt: skip
        seeded, reduced = _shape(saver, "thread-seeded"), _shape(saver, "thread-reduced")
        assert len(seeded["values"]["messages"]) == 5
        assert seeded == reduced
        state = graph.get_state({"configurable": {"thread_id": "thread-seeded"}})
        assert [m.id for m in state.values["messages"]] == [m.id for m in messages]
        assert state.next == graph.get_state(
            {"configurable": {"thread_id": "thread-reduced"}}).next
        saver.conn.close()
    finally:
        writer.close()
