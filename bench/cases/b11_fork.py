"""B11: fork a session at its last message, until its first turn can start (the fork's
log written and its thread seeded), through ``core.fork``.

Baseline: replaying the same messages into a fresh LangGraph thread turn by turn
(one ``update_state`` per user/assistant pair, as re-running the session through
the graph would checkpoint them). At full size the replay is measured on its
first ``REPLAY_CAP`` messages and extrapolated linearly (which flatters it: each
checkpoint grows with the thread).
"""

from __future__ import annotations

import time

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B11"
SIZES = {"small": 400, "full": 100_000}
REPLAY_CAP = 2_000


def run(ctx: Context) -> list[Row]:
    from mttui.config import load_settings
    from mttui.core.fork import fork
    from mttui.session.service import SessionService

    from ..data import make_home

    n = SIZES.get(ctx.size, SIZES["small"])
    home, project, files = make_home(ctx.root / "b11", sessions=1, messages_per_session=n)
    service = SessionService(home, project)
    service.reindex()
    service.list_sessions()
    settings = load_settings({"provider": "offline"})
    sid = files[0].session_id
    start = time.perf_counter()
    result = fork(service, settings, sid)
    ours = time.perf_counter() - start
    assert result.messages == n, result
    replayed = min(n, REPLAY_CAP)
    base = _replay(service, sid, replayed) * n / replayed
    note = "" if replayed == n else f" (replay extrapolated from {replayed:,})"
    return [Row(f"B11 fork at the last message ({n:,} messages){note}", fmt_time(base),
                fmt_time(ours), f"{base / ours:,.1f}×", "≤ 2 s", ours <= 2.0)]


def _replay(service: object, sid: str, count: int) -> float:
    import threading

    from mttui.config import load_settings
    from mttui.graph.agent import build_graph
    from mttui.graph.checkpoints import open_saver
    from mttui.graph.context import make_context
    from mttui.graph.journal import Journal
    from mttui.graph.models.offline import OfflineChatModel
    from mttui.graph.seed import view_messages
    from mttui.session.service import SessionService
    from mttui.session.transcript import fold

    assert isinstance(service, SessionService)
    records, _ = service.records(sid)
    messages = view_messages(None, fold(records).messages[:count])
    info = service.resolve(sid)
    writer = service.open_session(info.path)
    try:
        ctx = make_context(load_settings({"provider": "offline"}), OfflineChatModel(),
                           project=service.project, journal=Journal(writer), remembered=set(),
                           stop=threading.Event(), grace=0.0)
        saver = open_saver(service.layout.checkpoints_path(info.project_hash))
        graph = build_graph(ctx, saver)
        config = {"configurable": {"thread_id": "b11-replay"}}
        start = time.perf_counter()
        for i in range(0, len(messages), 2):
            graph.update_state(config, {"messages": messages[i:i + 2]},  # type: ignore[arg-type]
                               as_node="observation")
        took = time.perf_counter() - start
        saver.conn.close()
        return took
    finally:
        writer.close()
