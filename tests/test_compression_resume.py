"""Resume after compression (execution and transcript mode), and a kill -9 during
the summary call (real subprocesses)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import slow, text
from test_compression_support import (  # noqa: F401 - fixture by name
    FILLER,
    after_summary,
    cli_env,
    ids_of,
    json_lines,
    records,
    routed_fixture,
    transcript,
    wait_until,
)

from mttui.config import load_settings
from mttui.graph.compression.cut import is_summary
from mttui.graph.compression.summary import SUMMARY_HEADER
from mttui.graph.resume.apply import resume_session
from mttui.graph.runner import Runner
from mttui.session.reader import read_all
from mttui.session.service import SessionService
from mttui.session.transcript import fold


def _cli(home: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mttui.cli", *args], cwd=project,
                          env=cli_env(home, **env), capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def _check(home: Path, project: Path, sid: str) -> dict[str, Any]:
    r = _cli(home, project, "resume-check", sid, "--json")
    assert r.returncode == 0, r.stderr
    return dict(json_lines(r.stdout)[0])


def _reopen(home: Path, project: Path, sid: str, url: str) -> Runner:
    service = SessionService(home, project)
    writer = service.open_session(service.resolve(sid).path)
    settings = load_settings({"provider": "openai", "base_url": url})
    return Runner.for_service(service, writer, settings.with_overrides(max_retries=0))


def _close(runner: Runner) -> None:
    runner.end_session()
    runner.close()
    runner.writer.close()


def test_resume_after_compression_rebuilds_summary_kept_and_after(
    make_runner: Any, routed: Any, home: Path, project: Path
) -> None:
    runner = make_runner("openai", url=routed.url, token_limit=700)
    for i in range(4):
        routed.add(text(f"answer {i}", usage=None))
        list(runner.run(f"turn {i}: " + FILLER * 5))
    sid, path = runner.writer.session_id, runner.writer.path
    state = [m.id for m in runner.graph.get_state(runner.config).values["messages"]]
    _close(runner)
    log = read_all(path)[0]
    last = max(i for i, r in enumerate(log) if r["type"] == "compression")
    comp = log[last]
    after = [r["message"]["id"] for r in log[last:] if r["type"] == "transcript_message"]
    assert after, "the script should leave messages after the compression"
    expected = comp["kept_message_ids"] + after
    assert state[1:] == expected
    # the transcript alone tells the same view
    summary, view = fold(read_all(path)[0]).model_view()
    assert summary == comp["summary"] and [m["id"] for m in view] == expected

    plan = _check(home, project, sid)
    assert (plan["mode"], plan["compression_used"]) == ("execution", True)
    assert plan["messages_in_view"] == 1 + len(expected) and plan["warnings"] == []
    runner = _reopen(home, project, sid, routed.url)
    outcome = resume_session(runner)
    assert outcome.mode == "execution" and outcome.warnings == []
    routed.add(text("after the resume", usage=None))
    list(runner.run("one more question"))
    sent = routed.agent_requests[-1]
    assert sent["messages"][1]["content"] == SUMMARY_HEADER + comp["summary"]
    assert ids_of(after_summary(sent)[:-1], transcript(path)) == expected
    _close(runner)

    # transcript mode: the checkpoint database is gone
    db = SessionService(home, project).checkpoints_path()
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)
    expected += [m["id"] for m in transcript(path)[-2:]]
    plan = _check(home, project, sid)
    assert (plan["mode"], plan["compression_used"]) == ("transcript", True)
    assert plan["messages_in_view"] == 1 + len(expected)
    assert plan["refusal"]["code"] == "checkpoint_not_found"
    runner = _reopen(home, project, sid, routed.url)
    assert resume_session(runner).mode == "transcript"
    rebuilt = runner.graph.get_state(runner.config).values["messages"]
    assert is_summary(rebuilt[0]) and rebuilt[0].content == SUMMARY_HEADER + comp["summary"]
    assert [m.id for m in rebuilt[1:]] == expected
    routed.add(text("after the transcript resume", usage=None))
    assert list(runner.run("and now?"))[-1].status == "completed"
    sent = routed.agent_requests[-1]
    assert sent["messages"][1]["content"] == SUMMARY_HEADER + comp["summary"]
    assert ids_of(after_summary(sent)[:-1], transcript(path)) == expected
    _close(runner)


def test_kill_9_during_the_summary_leaves_the_session_resumable(
    routed: Any, home: Path, project: Path
) -> None:
    env = {"OPENAI_BASE_URL": routed.url, "OPENAI_API_KEY": "sk-test",
           "MTTUI_TOKEN_LIMIT": "600"}  # fmt: skip
    routed.add(text("first answer", usage=None))
    first = _cli(home, project, "exec", "--json", "first " + FILLER * 5, **env)
    assert first.returncode == 0, first.stderr
    sid = json_lines(first.stdout)[0]["session_id"]
    assert not routed.summary_requests  # under the threshold

    routed.summary(slow("x" * 400, delay=0.25, pieces=400))  # held open until the kill
    cmd = [sys.executable, "-m", "mttui.cli", "exec", "--json", "--session", sid,
           "second " + FILLER * 5]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=project, env=cli_env(home, **env), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    try:
        wait_until(lambda: routed.summary_requests)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    path = SessionService(home, project).resolve(sid).path
    assert not records(path, "compression")
    plan = _check(home, project, sid)
    assert plan["mode"] == "execution" and plan["refusal"] is None
    assert plan["compression_used"] is False

    routed.add(text("third answer", usage=None))
    later = _cli(home, project, "exec", "--json", "--session", sid, "third question", **env)
    assert later.returncode == 0, later.stderr
    events = json_lines(later.stdout)
    assert events[-2]["event"] == "run_end" and events[-2]["status"] == "completed"
    comp = next(e for e in events if e["event"] == "compression")
    rec = records(path, "compression")
    assert len(rec) == 1 and comp == {
        "event": "compression", "removed_count": rec[0]["removed_count"],
        "kept_count": rec[0]["kept_count"], "tokens_before": rec[0]["tokens_before"],
        "tokens_after": rec[0]["tokens_after"]}  # fmt: skip
    assert _check(home, project, sid)["compression_used"] is True
