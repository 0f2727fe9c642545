"""``mttui compact`` in real subprocesses: success (human and JSON), nothing to
compress, a pending approval, locked (4), unknown (5), a failing summary (1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import error
from test_compression_support import (  # noqa: F401 - fixture by name
    FILLER,
    cli_env,
    json_lines,
    records,
    routed_fixture,
)

from mttui.config import load_settings
from mttui.graph.compression.cut import is_summary
from mttui.graph.events import RunEnded
from mttui.graph.runner import Runner
from mttui.session.reader import read_all
from mttui.session.service import SessionService


def _compact(home: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mttui.cli", "compact", *args], cwd=project,
                          env=cli_env(home, **env), capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def _session(make_runner: Any, turns: int, **kw: Any) -> tuple[str, Path]:
    runner = make_runner(auto_compress=False, **kw)  # the offline model
    for i in range(turns):
        assert list(runner.run(f"turn {i}: " + FILLER * 4))[-1].status == "completed"
    sid, path = runner.writer.session_id, runner.writer.path
    runner.end_session()
    runner.close()
    runner.writer.close()
    return sid, path


def _view_ids(home: Path, project: Path, sid: str) -> list[str]:
    service = SessionService(home, project)
    with service.open_session(service.resolve(sid).path) as writer:
        runner = Runner.for_service(service, writer, load_settings({"provider": "offline"}))
        messages = runner.graph.get_state(runner.config).values["messages"]
        runner.close()
    return [("summary" if is_summary(m) else m.id) for m in messages]


def test_compact_json_and_human(make_runner: Any, home: Path, project: Path) -> None:
    sid, path = _session(make_runner, 5)
    r = _compact(home, project, sid[:6], "--json")
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert len(out) == 1
    rec = records(path, "compression")[-1]
    assert out[0] == {"session_id": sid, "removed_count": rec["removed_count"],
                      "kept_count": rec["kept_count"], "tokens_before": rec["tokens_before"],
                      "tokens_after": rec["tokens_after"], "summary": rec["summary"]}  # fmt: skip
    assert rec["trigger"] == "manual" and rec["removed_count"] > 0
    assert rec["summary"].startswith("<compressed_snapshot>")
    assert rec["tokens_after"] < rec["tokens_before"]
    assert _view_ids(home, project, sid) == ["summary", *rec["kept_message_ids"]]
    assert read_all(path)[0][-1]["type"] == "session_end"  # the process left cleanly

    more = make_runner(auto_compress=False, writer=SessionService(home, project).open_session(path))
    for i in range(3):
        list(more.run(f"more {i}: " + FILLER * 4))
    more.close()
    more.writer.close()
    r = _compact(home, project, "last")
    assert r.returncode == 0, r.stderr
    second = records(path, "compression")[-1]
    assert r.stdout.strip() == (f"compressed {second['removed_count']} messages — "
                                f"{second['tokens_before']} → {second['tokens_after']} tokens")
    assert "from the earlier snapshot" in second["summary"]  # chained


def test_nothing_to_compress(make_runner: Any, home: Path, project: Path) -> None:
    sid, path = _session(make_runner, 1)
    r = _compact(home, project, sid, "--json")
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)[0]
    assert out["session_id"] == sid and out["compressed"] is False and out["reason"]
    assert set(out) == {"session_id", "compressed", "reason"}
    human = _compact(home, project, sid)
    assert human.returncode == 0 and human.stdout.startswith("nothing to compress")
    assert not records(path, "compression")


def test_locked_unknown_and_pending_approval(make_runner: Any, home: Path, project: Path) -> None:
    sid, path = _session(make_runner, 3)
    service = SessionService(home, project)
    with service.open_session(path):
        locked = _compact(home, project, sid, "--json")
    assert locked.returncode == 4 and "open for writing" in locked.stderr
    assert "Traceback" not in locked.stderr and locked.stdout == ""
    unknown = _compact(home, project, "ffffffffffff")
    assert unknown.returncode == 5 and "Traceback" not in unknown.stderr

    runner = make_runner(writer=service.open_session(path))  # approval "ask"
    events = list(runner.run("!echo waiting"))
    assert isinstance(events[-1], RunEnded) and events[-1].status == "awaiting_approval"
    runner.close()
    runner.writer.close()
    pending = _compact(home, project, sid)
    assert pending.returncode == 1 and "approval is pending" in pending.stderr
    assert "Traceback" not in pending.stderr
    assert not records(path, "compression")


def test_instructions_and_a_failing_summary(
    make_runner: Any, routed: Any, home: Path, project: Path
) -> None:
    sid, path = _session(make_runner, 4)
    env = {"OPENAI_BASE_URL": routed.url, "OPENAI_API_KEY": "sk-test"}
    before = _view_ids(home, project, sid)
    routed.summary(error(500, "summary server broke"))
    failed = _compact(home, project, sid, "--instructions", "keep the turn numbers", **env)
    assert failed.returncode == 1 and "nothing changed" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not records(path, "compression") and _view_ids(home, project, sid) == before
    sent = routed.summary_requests[0]["messages"][0]["content"]
    assert sent.endswith("Additional instructions: keep the turn numbers")
    ok = _compact(home, project, sid, "--json", **env)
    assert ok.returncode == 0, ok.stderr
    assert json_lines(ok.stdout)[0]["summary"] == records(path, "compression")[0]["summary"]
