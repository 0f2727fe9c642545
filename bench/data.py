"""Synthetic homes for the benchmarks, written straight as JSONL (no fsync per line).

Lines have exactly the shape ``mttui.session.log.dump_record`` writes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mttui.session.paths import ensure_dir, project_hash
from mttui.session.records import session_filename

from .textgen import message_text

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _ts(ms: int) -> str:
    when = _EPOCH + timedelta(milliseconds=ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _line(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass
class Written:
    path: Path
    session_id: str
    messages: int
    text_bytes: int


def write_session(
    folder: Path,
    project: Path,
    sid: str,
    n_messages: int,
    *,
    start_ms: int,
    first_index: int,
    rng: random.Random,
    compress_every: int = 0,
    kept: int = 20,
) -> Written:
    """One session log: start, ``n_messages`` messages (user/assistant turns, some tool
    calls with their journal records), end. Message ``k`` of the whole data set uses
    text number ``first_index + k`` (so planted terms have a known frequency).
    ``compress_every``: each turn in a run (``run_start``/``run_end``) and a
    ``compression`` record before every such number of messages (none before the
    first), keeping the ``kept`` messages before it, as a long session that talked to
    its model has."""
    path = folder / session_filename(sid, _EPOCH + timedelta(milliseconds=start_ms))
    seq, ms, text_bytes = 0, start_ms, 0
    out: list[str] = []

    def rec(type_: str, **fields: object) -> None:
        nonlocal seq, ms
        seq += 1
        ms += rng.randint(1, 2000)
        base = {"type": type_, "seq": seq, "timestamp": _ts(ms), "session_id": sid}
        out.append(_line({**base, **fields}))

    rec("session_start", v=1, thread_id=f"thread-{sid}", project=str(project),
        project_hash=folder.name, provider="openai", model="gpt-bench", title=None,
        app_version="bench")  # fmt: skip
    with open(path, "w", encoding="utf-8") as fh:
        in_view = 0
        for k in range(n_messages):
            if compress_every and k % 2 == 0:  # a turn of a session that ran its model
                rec("run_start", run_id=f"run-{first_index + k:012x}")
            if compress_every and k and k % compress_every == 0:
                ids = [f"msg-{first_index + i:032x}" for i in range(k - kept, k)]
                rec("compression", summary=f"<compressed_snapshot>{k}</compressed_snapshot>",
                    removed_count=in_view - kept, kept_count=kept, kept_message_ids=ids,
                    trigger="auto", tokens_before=100_000, tokens_after=12_000)  # fmt: skip
                in_view = kept
            in_view += 1
            text = message_text(rng, first_index + k)
            text_bytes += len(text.encode("utf-8"))
            msg: dict[str, object] = {"id": f"msg-{first_index + k:032x}",
                                      "role": "user" if k % 2 == 0 else "assistant",
                                      "content": text, "status": "sent"}  # fmt: skip
            if k % 2:
                msg["usage"] = {"input_tokens": 100 + k % 900, "output_tokens": 20 + k % 300}
            rec("transcript_message", message=msg)
            if compress_every and k % 2:
                rec("run_end", run_id=f"run-{first_index + k - 1:012x}", status="completed")
            if len(out) >= 5000:
                fh.write("".join(out))
                out.clear()
        rec("session_end", stats={"turns": n_messages // 2, "tool_calls": 0})
        fh.write("".join(out))
    return Written(path, sid, n_messages, text_bytes)


def make_home(
    root: Path, *, sessions: int, messages_per_session: int, seed: int = 7,
    compress_every: int = 0,
) -> tuple[Path, Path, list[Written]]:
    """A data home with one project holding ``sessions`` logs: (home, project, files)."""
    home, project = root / "home", root / "project"
    project.mkdir(parents=True, exist_ok=True)
    folder = ensure_dir(home / "history" / project_hash(project))
    rng = random.Random(seed)
    written = []
    for i in range(sessions):
        sid = f"{rng.getrandbits(48):012x}"
        start = rng.randint(0, 300 * 24 * 3600 * 1000)
        written.append(
            write_session(
                folder,
                project,
                sid,
                messages_per_session,
                start_ms=start,
                first_index=i * messages_per_session,
                rng=rng,
                compress_every=compress_every,
            )  # fmt: skip
        )
    return home, project, written


def checkpoint_view(home: Path, project: Path, sid: str) -> None:
    """Give the session's thread a checkpoint holding its model's view (what a session
    that ran has), built from the index and the log since its last compression."""
    from mttui.config import load_settings
    from mttui.graph.resume.apply import plan_for_runner, rebuild
    from mttui.graph.runner import Runner
    from mttui.session.service import SessionService

    service = SessionService(home, project)
    with service.open_writer(sid) as writer:
        runner = Runner.for_service(service, writer, load_settings({"provider": "offline"}))
        _, facts = plan_for_runner(runner)
        messages, _ = rebuild(facts)
        runner.graph.update_state(runner.config, {"messages": messages, "stop_reason": "stopped"},
                                  as_node="observation")  # fmt: skip
        runner.close()
