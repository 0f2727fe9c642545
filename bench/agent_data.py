"""Agent-shaped session logs: what a coding agent's history looks like.

Each turn is a request (prose, sometimes Chinese), the assistant's tool call, the
tool's output and the answer, with the execution journal around the call
(``run_start``, ``tool_dispatch``, ``tool_outcome``, ``run_end``). Tool outputs are
real source code (slices of the Python standard library's own files), build and
test logs, or directory listings, from a few bytes to tens of KB; answers mix
English, code and CJK. Lines have the shape ``dump_record`` writes.
"""

from __future__ import annotations

import json
import random
import sysconfig
from datetime import timedelta
from pathlib import Path

from mttui.session.paths import ensure_dir, project_hash
from mttui.session.records import session_filename

from .data import _EPOCH, Written, _ts
from .textgen import _CJK, message_text

_LOG_LINES = (
    "INFO  starting worker pid={n}",
    "DEBUG cache miss for key build/{n}.o",
    "WARN  retrying request {n} after timeout (attempt 2/5)",
    "ERROR test_session_{n} failed: AssertionError: expected 3, got {n}",
    "PASSED tests/test_module_{n}.py::test_case_{n}",
    "   Compiling crate-{n} v0.{n}.1",
    "npm WARN deprecated package-{n}@1.0.{n}",
    "2026-11-30T12:00:{n:02d}Z GET /api/items/{n} 200 {n}ms",
    "错误: 无法连接到数据库 (重试 {n})",
)
_TOOLS = ("read_file", "shell", "grep", "list_dir", "write_file")


def _sources() -> list[str]:
    """Text of some real Python source files (the standard library's)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.stat().st_size > 4000)[:60]
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


def _tool_output(rng: random.Random, sources: list[str], tool: str) -> str:
    size = int(rng.choice((40, 300, 1500, 4000, 12000, 40000)) * rng.uniform(0.5, 1.5))
    if tool in ("read_file", "grep", "write_file"):
        src = rng.choice(sources)
        start = rng.randrange(max(1, len(src) - size))
        return src[start : start + size]
    if tool == "list_dir":
        return "\n".join(f"src/module_{rng.randrange(999)}.py" for _ in range(size // 24 + 1))
    lines = []
    while sum(len(x) + 1 for x in lines) < size:
        lines.append(rng.choice(_LOG_LINES).format(n=rng.randrange(60)))
    return "\n".join(lines)


def _prose(rng: random.Random, n: int) -> str:
    text = message_text(rng, n)
    if rng.random() < 0.3:  # a Chinese request or answer
        start = rng.randrange(len(_CJK) - 30)
        text = _CJK[start : start + rng.randint(6, 30)] + "。" + text
    return text


def write_agent_session(folder: Path, project: Path, sid: str, n_messages: int, *,
                        start_ms: int, rng: random.Random, sources: list[str]) -> Written:
    """One session of about ``n_messages`` messages, four per turn."""
    path = folder / session_filename(sid, _EPOCH + timedelta(milliseconds=start_ms))
    seq, ms, text_bytes, count = 0, start_ms, 0, 0
    out: list[str] = []

    def rec(type_: str, **fields: object) -> None:
        nonlocal seq, ms
        seq += 1
        ms += rng.randint(1, 3000)
        base = {"type": type_, "seq": seq, "timestamp": _ts(ms), "session_id": sid}
        out.append(json.dumps({**base, **fields}, ensure_ascii=False, separators=(",", ":"))
                   + "\n")

    def message(role: str, content: str, **extra: object) -> None:
        nonlocal count, text_bytes
        count += 1
        text_bytes += len(content.encode("utf-8"))
        rec("transcript_message", message={"id": f"{sid}-{count}", "role": role,
                                           "content": content, "status": "sent", **extra})

    rec("session_start", v=1, thread_id=f"thread-{sid}", project=str(project),
        project_hash=folder.name, provider="openai", model="gpt-bench", title=None,
        app_version="bench")  # fmt: skip
    with open(path, "w", encoding="utf-8") as fh:
        turn = 0
        while count < n_messages:
            turn += 1
            run = f"run-{sid}-{turn}"
            rec("run_start", run_id=run)
            message("user", _prose(rng, count))
            tool = rng.choice(_TOOLS)
            call = {"id": f"call-{turn}", "name": tool,
                    "args": {"path": f"src/module_{rng.randrange(999)}.py"}}
            message("assistant", "", tool_calls=[call],
                    usage={"input_tokens": 900 + turn, "output_tokens": 40})
            rec("tool_dispatch", run_id=run, call_id=call["id"], tool_name=tool)
            output = _tool_output(rng, sources, tool)
            rec("tool_outcome", run_id=run, call_id=call["id"], status="success")
            message("tool", output, tool_call_id=call["id"], name=tool)
            message("assistant", _prose(rng, count),
                    usage={"input_tokens": 1200 + turn, "output_tokens": 90})
            rec("run_end", run_id=run, status="completed",
                usage={"input_tokens": 2100, "output_tokens": 130})
            if len(out) >= 2000:
                fh.write("".join(out))
                out.clear()
        fh.write("".join(out))
    return Written(path, sid, count, text_bytes)


def make_agent_home(root: Path, *, sessions: int, messages_per_session: int,
                    seed: int = 11) -> tuple[Path, Path, list[Written]]:
    """A data home with one project of agent-shaped sessions: (home, project, files)."""
    home, project = root / "home", root / "project"
    project.mkdir(parents=True, exist_ok=True)
    folder = ensure_dir(home / "history" / project_hash(project))
    rng = random.Random(seed)
    sources = _sources()
    written = [write_agent_session(folder, project, f"{rng.getrandbits(48):012x}",
                                   messages_per_session, start_ms=rng.randint(0, 10**10),
                                   rng=rng, sources=sources)
               for _ in range(sessions)]  # fmt: skip
    return home, project, written
