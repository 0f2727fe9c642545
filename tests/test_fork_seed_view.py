"""A fast fork without a compression seeds its thread with exactly the messages the
log reader would give the model: odd fields left out as the reader leaves them out,
updates applied (in-process, real files and checkpoints)."""

from __future__ import annotations

import gc

import pytest

from mttui.config import load_settings
from mttui.core.fork import fork
from mttui.core.fork_guard import ForkFailed
from mttui.graph.checkpoints import open_saver
from mttui.graph.seed import view_messages
from mttui.session.resume.facts import read_facts
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.logs import records


def _source(service: SessionService, *, odd: str) -> str:
    w = service.create_session(provider="offline", model="m", title=None)
    sid = w.session_id

    def msg(i: int, role: str, content: object, **extra: object) -> None:
        w.append("transcript_message",
                 message={"id": f"msg-{i}", "role": role, "content": content, "status": "sent",
                          **extra})

    msg(1, "user", "快速排序 how does it work")
    msg(2, "assistant", "", tool_calls=[{"id": "c1", "name": "read_file", "args": {"p": "a"}}],
        usage={"input_tokens": 10, "output_tokens": 3})
    msg(3, "tool", "file a", tool_call_id="c1", name="read_file" if odd != "name" else 5)
    msg(4, "assistant", "answer", usage={"input_tokens": "many", "output_tokens": 5}
        if odd == "usage" else {"input_tokens": 1})
    msg(5, "user", "second \ud800 question" if odd == "surrogate" else "second question")
    w.append("message_update", message_id="msg-5", status="sent", content="second, edited")
    msg(6, "assistant", "second answer", created_at=7 if odd == "created" else "2026-01-01")
    msg(7, "user", "third", extra_field={"x": 1})
    w.close()
    return sid


@pytest.mark.parametrize("odd", ["none", "name", "usage", "surrogate", "created"])
def test_fast_fork_seeds_the_readers_view(service: SessionService, odd: str) -> None:
    sid = _source(service, odd=odd)
    info = service.resolve(sid)
    result = fork(service, load_settings({"provider": "offline"}), sid)
    assert result.messages == 7
    path = service.resolve(result.session_id).path
    facts = read_facts(path, result.session_id, info.project_hash)
    expected = view_messages(facts.summary, facts.view)
    saver = open_saver(service.layout.checkpoints_path(info.project_hash))
    try:
        thread = fold(records(path)).thread_id
        got = saver.get_tuple({"configurable": {"thread_id": thread}})
    finally:
        saver.conn.close()
    seeded = got.checkpoint["channel_values"]["messages"]
    assert [m.id for m in seeded] == [m.id for m in expected]
    # a closing result's id is new each time: compare the rest
    assert [m.model_dump(exclude={"id"}) for m in seeded] == [
        m.model_dump(exclude={"id"}) for m in expected]
    assert len(seeded) == 7 and seeded[4].content.startswith("second, edited")


def test_collector_paused_while_seeding_and_back_on_after(
        service: SessionService, monkeypatch: pytest.MonkeyPatch) -> None:
    import mttui.graph.seed as seed

    sid = _source(service, odd="none")
    seen: list[bool] = []

    def failing(*args: object, **kwargs: object) -> str:
        seen.append(gc.isenabled())
        raise OSError("disk full")

    monkeypatch.setattr(seed, "seed_thread", failing)
    with pytest.raises(ForkFailed, match="nothing of it was kept"):
        fork(service, load_settings({"provider": "offline"}), sid)
    assert seen == [False]
    assert gc.isenabled()
    assert [s.id for s in service.list_sessions().sessions] == [sid]  # removed
