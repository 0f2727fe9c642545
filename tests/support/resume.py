"""Helpers shared by the resume and crash tests: real subprocesses, real files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from mttui.session.index.ingest import build_index
from mttui.session.paths import Layout, project_hash
from tests.support import zygote
from tests.support.index_dump import logical_dump


def env(home: Path, **extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MTTUI_"))}
    out.update(MTTUI_HOME=str(home), MTTUI_CONFIG=str(home.parent / "none.toml"),
               MTTUI_MAX_RETRIES="0", MTTUI_TIMEOUT="10")  # fmt: skip
    out.update(extra)
    return out


def cli(home: Path, project: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """``mttui ARGS`` in a separate process (forked warm: see ``support/zygote.py``)."""
    return zygote.run("cli", list(args), cwd=project, env=env(home, **extra), timeout=60)


def json_events(stdout: str) -> list[dict[str, Any]]:
    """The JSON lines of ``--json`` output."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def check(home: Path, project: Path, ref: str) -> dict[str, Any]:
    """``mttui resume-check REF --json``, asserting that it changed no file."""
    before = snapshot(home)
    r = cli(home, project, "resume-check", ref, "--json")
    assert r.returncode == 0, r.stderr
    assert_unchanged(before, snapshot(home))
    plan: dict[str, Any] = json.loads(r.stdout)
    return plan


def recheck(home: Path, project: Path, ref: str) -> dict[str, Any]:
    """The same check in this process (LangGraph is warm here: cheap)."""
    from mttui.graph.resume.plan import check_resume

    return check_resume(Layout(home), project_hash(project), ref).as_json()


def codes(plan: dict[str, Any]) -> list[str]:
    return [w["code"] for w in plan["warnings"]]


def snapshot(home: Path) -> dict[str, Any]:
    """Bytes and mtimes of every file of a data home (SQLite's ``-shm`` shared-memory
    files excepted), plus the index's rows."""
    files: dict[str, Any] = {}
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.name.endswith("-shm"):
            st = path.stat()
            files[str(path.relative_to(home))] = (
                st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return {"files": files, "index": _index_rows(home / "index.sqlite")}


def _index_rows(index: Path) -> Any:
    """The index's rows, read from a copy (opening the index itself could checkpoint
    its WAL into it when this is the last connection)."""
    if not index.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in ("", "-wal"):
            src = Path(str(index) + suffix)
            if src.exists():
                shutil.copyfile(src, Path(tmp) / ("index.sqlite" + suffix))
        return logical_dump(Path(tmp) / "index.sqlite")


def assert_unchanged(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert after["index"] == before["index"]
    for name, value in after["files"].items():
        if name in before["files"]:
            assert value == before["files"][name], f"{name} changed"
        else:  # only SQLite's empty WAL companion of a database opened read-only
            assert name.endswith("-wal") and value[0] == 0, f"{name} was created"
    assert set(before["files"]) <= set(after["files"]), "a file vanished"


def index_equals_rebuild(home: Path, tmp: Path) -> None:
    layout = Layout(home)
    rebuilt = tmp / "rebuilt.sqlite"
    rebuilt.unlink(missing_ok=True)
    build_index(layout, rebuilt)
    assert logical_dump(layout.index_path) == logical_dump(rebuilt)


def assert_every_call_answered(request: dict[str, Any]) -> None:
    """An OpenAI request body: each assistant tool call is followed by its tool message
    before the next non-tool message."""
    msgs = request["messages"]
    for i, m in enumerate(msgs):
        calls = [c["id"] for c in m.get("tool_calls") or []]
        if not calls:
            continue
        answers = []
        for later in msgs[i + 1:]:
            if later["role"] != "tool":
                break
            answers.append(later["tool_call_id"])
        assert sorted(answers) == sorted(calls), (calls, answers)


def request_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


def checkpoints_db(home: Path, project: Path) -> Path:
    """The project's LangGraph checkpoint database."""
    return home / "history" / project_hash(project) / "checkpoints.sqlite"
