"""B5: ``resume-check`` of one long session with a compression 200 messages from the end.

Two sizes (10 000 and 100 000 messages at full size) show that the cost does not
grow with the messages before the last compression. Baseline: what a whole-file
reader does — ``json.loads`` every line and fold the records into a plan.
Ours, in-process: the log-only plan from the index plus the log's tail (what
``mttui resume-check`` does when the session has no checkpoint). Then, in a
fresh process each time, the whole command: without a checkpoint; with one, read by
the light checkpoint reader (no LangGraph import); and with one the reader does not
recognise (a write with an unknown msgpack extension), where LangGraph reads it.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

from mttui.session.paths import ensure_dir, project_hash
from mttui.session.reader import ReadStats
from mttui.session.resume.check import check_session, plan_from_log
from mttui.session.service import SessionService
from mttui.session.transcript import fold

from ..context import Context
from ..data import checkpoint_view
from ..fresh import bytecode_env, user_python
from ..textgen import message_text
from ..timing import Row, fmt_time, median_time

CASE = "B5"
TAIL, KEPT = 200, 20
LIMIT_S = 0.3


def _write(root: Path, n: int) -> tuple[Path, Path, str]:
    """A home with one session of ``n`` messages; the compression record comes
    ``TAIL`` messages from the end and keeps the ``KEPT`` before it."""
    home, project = root / "home", root / "project"
    project.mkdir(parents=True, exist_ok=True)
    folder = ensure_dir(home / "history" / project_hash(project))
    sid, rng = f"{n:012x}", random.Random(n)
    path = folder / f"session-20260101-000000-{sid}.jsonl"
    seq = 0

    def line(type_: str, **fields: object) -> str:
        nonlocal seq
        seq += 1
        rec = {"type": type_, "seq": seq, "timestamp": "2026-01-01T00:00:00.000Z",
               "session_id": sid, **fields}  # fmt: skip
        return json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"

    with open(path, "w", encoding="utf-8") as fh:
        fh.write(line("session_start", v=1, thread_id=f"thread-{sid}", project=str(project),
                      provider="openai", model="bench", title=None))  # fmt: skip
        for k in range(n):
            if k == n - TAIL:
                kept = [f"msg-{i:032x}" for i in range(k - KEPT, k)]
                fh.write(line("compression", summary="<compressed_snapshot/>",
                              removed_count=k - KEPT, kept_count=KEPT, kept_message_ids=kept,
                              trigger="auto", tokens_before=1, tokens_after=1))  # fmt: skip
            role = "user" if k % 2 == 0 else "assistant"
            fh.write(line("transcript_message", message={
                "id": f"msg-{k:032x}", "role": role, "content": message_text(rng, k),
                "status": "sent"}))  # fmt: skip
    return home, project, sid


def _baseline(path: Path, sid: str) -> None:
    records, stats = [], ReadStats()
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            records.append(json.loads(raw))
    plan_from_log(sid, fold(records), stats, checkpoint_found=False)


def _unrecognised_copy(home: Path, root: Path) -> Path:
    """A copy of ``home`` whose checkpoint has a write the light reader refuses (an
    unknown msgpack extension as a resume value; LangGraph ignores it)."""
    import ormsgpack

    copy = root / "home-fallback"
    shutil.copytree(home, copy)
    db = next(copy.glob("history/*/checkpoints.sqlite"))
    conn = sqlite3.connect(db)
    tid, cid = conn.execute("SELECT thread_id, checkpoint_id FROM checkpoints").fetchone()
    conn.execute("INSERT INTO writes VALUES (?, '', ?, ?, '', -4, '__resume__', 'msgpack', ?)",
                 (tid, cid, "00000000-0000-0000-0000-000000000000",
                  ormsgpack.packb(ormsgpack.Ext(42, b"\xc0"))))  # fmt: skip
    conn.commit()
    conn.close()
    return copy


def _fresh_process(root: Path, home: Path, project: Path, sid: str, repeats: int
                   ) -> tuple[float, dict]:
    """The median time of ``mttui resume-check SID --json`` in a new interpreter, and
    its plan; fails if that process imported LangGraph when it should not have."""
    env = bytecode_env(root / "pycache", home)
    cmd = [user_python(root), "-m", "mttui.cli", "resume-check", sid, "--json"]
    subprocess.run(cmd, cwd=project, env=env, check=True, capture_output=True)  # the cache
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=project, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    out = subprocess.run(cmd, cwd=project, env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
                         check=True, capture_output=True, text=True)  # fmt: skip
    plan = json.loads(out.stdout)
    plan["langgraph"] = any(  # an -X importtime line of a langgraph module, at any depth
        line.rsplit("|", 1)[-1].strip().split(".")[0] == "langgraph"
        for line in out.stderr.splitlines() if line.startswith("import time:"))  # fmt: skip
    return sorted(times)[len(times) // 2], plan


def run(ctx: Context) -> list[Row]:
    sizes = (10_000, 100_000) if ctx.size == "full" else (2_000, 20_000)
    rows, mine, base = [], {}, {}
    for n in sizes:
        home, project, sid = _write(ctx.root / f"b5-{n}", n)
        service = SessionService(home, project)
        service.reindex()
        path = service.resolve(sid).path
        plan = check_session(service, sid)
        assert plan.messages_in_view == 1 + KEPT + TAIL and plan.compression_used
        base[n] = median_time(lambda p=path, s=sid: _baseline(p, s),  # type: ignore[misc]
                              ctx.params["base_repeats"], warmup=0)
        mine[n] = median_time(lambda v=service, s=sid: check_session(v, s),  # type: ignore[misc]
                              ctx.params["repeats"] * 3)
        rows.append(Row(f"B5 resume-check, {n:,} messages, in-process (no checkpoint)",
                        fmt_time(base[n]), fmt_time(mine[n]), f"{base[n] / mine[n]:,.0f}×",
                        f"≤ {fmt_time(LIMIT_S)}", mine[n] <= LIMIT_S))  # fmt: skip
    small, big = sizes
    growth, base_growth = mine[big] / mine[small], base[big] / base[small]
    rows.append(Row(f"B5 cost growth {small:,} → {big:,} messages", f"{base_growth:.1f}×",
                    f"{growth:.2f}×", "—", "independent (≤ 1.5×)", growth <= 1.5))  # fmt: skip
    repeats = 11 if ctx.size == "full" else 1
    log_only, plan = _fresh_process(ctx.root, home, project, sid, repeats)
    assert plan["checked"] == "log" and not plan["langgraph"]
    checkpoint_view(home, project, sid)
    light, plan = _fresh_process(ctx.root, home, project, sid, repeats)
    assert plan["checked"] == "checkpoint" and plan["mode"] == "execution"
    assert not plan["langgraph"]  # the light reader read it
    copy = _unrecognised_copy(home, ctx.root / f"b5-{big}")
    full, fallback = _fresh_process(ctx.root, copy, project, sid, repeats)
    assert fallback == {**plan, "langgraph": True}  # the same plan, read by LangGraph
    for label, took in (("no checkpoint", log_only), ("with checkpoint", light)):
        rows.append(Row(f"B5 `mttui resume-check` {big:,} messages, fresh process ({label})",
                        "—", fmt_time(took), "—", f"≤ {fmt_time(LIMIT_S)}",
                        took <= LIMIT_S))  # fmt: skip
    rows.append(Row("B5 (info) the same with a checkpoint the light reader refuses "
                    "(LangGraph reads it)", "—", fmt_time(full), "—", "—", None))  # fmt: skip
    return rows
