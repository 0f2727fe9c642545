"""B11: fork a session at its last message, until its first turn can start (the fork's
log written, its index rows in place and its thread seeded), through ``core.fork``.

The session has a compression ``TAIL`` messages from the end, as any session of that
length has (no model holds 100 000 messages): the fork's thread is seeded with the
model's view (summary, kept and later messages), the log's lines and the index rows
of all messages are copied. A second row forks a session without any compression
(the model's view is every message: the worst case; its thread is seeded from the
copied lines parsed in one go, messages copied from a validated one per kind and
put into the checkpoint without the reducer; no target of its own). LangGraph is
imported before either side is timed; a fresh ``mttui fork`` process adds its
import (~0.8 s here).

Baseline: replaying the same messages into a fresh LangGraph thread turn by turn
(one ``update_state`` per user/assistant pair, as re-running the session through
the graph would checkpoint them). At full size the replay is measured on its
first ``REPLAY_CAP`` messages and extrapolated linearly (which flatters it: each
checkpoint grows with the thread).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B11"
SIZES = {"small": 400, "full": 100_000}
REPLAY_CAP = 2_000
TAIL, KEPT = 200, 20


def run(ctx: Context) -> list[Row]:
    import mttui.graph.agent  # noqa: F401  (both sides measured with LangGraph imported)

    n = SIZES.get(ctx.size, SIZES["small"])
    rows = [_case(ctx, n, compressed=True)]
    rows.append(_case(ctx, n, compressed=False))
    return rows


def _case(ctx: Context, n: int, *, compressed: bool) -> Row:
    from mttui.config import load_settings
    from mttui.core.fork import fork
    from mttui.session.service import SessionService

    from ..data import make_home

    root = ctx.root / ("b11" if compressed else "b11-plain")
    home, project, files = make_home(root, sessions=1, messages_per_session=n)
    sid = files[0].session_id
    if compressed:
        _compress(files[0].path, n)
    service = SessionService(home, project)
    service.reindex()
    service.list_sessions()
    settings = load_settings({"provider": "offline"})
    start = time.perf_counter()
    result = fork(service, settings, sid)
    ours = time.perf_counter() - start
    assert result.messages == n, result
    replayed = min(n, REPLAY_CAP)
    base = _replay(service, sid, replayed) * n / replayed
    note = "" if replayed == n else f" (replay extrapolated from {replayed:,})"
    what = "compressed" if compressed else "no compression"
    return Row(f"B11 fork at the last message ({n:,} messages, {what}){note}", fmt_time(base),
               fmt_time(ours), f"{base / ours:,.1f}×", "≤ 2 s" if compressed else "—",
               ours <= 2.0 if compressed else None)


def _compress(path: Path, n: int) -> None:
    """Put a ``compression`` record ``TAIL`` messages from the end of the log (keeping the
    ``KEPT`` messages before it), renumbering the records after it."""
    out: list[dict[str, object]] = []
    ids: list[str] = []
    seen = seq = 0
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            rec = json.loads(raw)
            if rec["type"] == "transcript_message":
                if seen == n - TAIL:
                    seq += 1
                    kept = list(ids)
                    out.append({"type": "compression", "seq": seq, "timestamp": rec["timestamp"],
                                "session_id": rec["session_id"], "summary": "<summary/>",
                                "removed_count": seen - KEPT, "kept_count": KEPT,
                                "kept_message_ids": kept, "trigger": "auto",
                                "tokens_before": 1, "tokens_after": 1})
                ids = [*ids[-KEPT + 1:], rec["message"]["id"]]
                seen += 1
            seq += 1
            rec["seq"] = seq
            out.append(rec)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                      for r in out)


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
