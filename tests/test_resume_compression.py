"""Resume after compression: the model's view is summary + kept + after, in execution
and in transcript mode; a kill -9 during the summary call leaves no compression."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, slow, text
from resume_support import check, codes, env, events, index_equals_rebuild, log_records, recheck

from mttui.graph.compression.cut import is_summary
from mttui.graph.compression.summary import SUMMARY_HEADER
from mttui.graph.resume.apply import resume_session
from mttui.graph.resume.plan import check_resume
from mttui.session.reader import read_all
from mttui.session.resume.check import check_session
from mttui.session.service import SessionService

LONG = "please remember this detail about the parser module. " * 12


def _compressed(runner: Any) -> dict[str, Any]:
    for i in range(4):
        list(runner.run(f"turn {i}: {LONG}"))
    list(runner.compact())
    list(runner.run("after the compression"))
    return [r for r in read_all(runner.writer.path)[0] if r["type"] == "compression"][-1]


def test_resume_after_compression_in_both_modes(
    make_runner: Any, home: Path, project: Path
) -> None:
    runner = make_runner(auto_compress=False)
    rec = _compressed(runner)
    service = SessionService(home, project)
    sid = runner.writer.session_id
    plan = check_resume(service.layout, service.project_hash, sid)
    view = runner.graph.get_state(runner.config).values["messages"]
    assert plan.mode == "execution" and plan.codes() == [] and plan.compression_used
    assert plan.messages_in_view == len(view) == 1 + rec["kept_count"] + 2
    assert check_session(service, sid).messages_in_view == plan.messages_in_view  # log-only
    path = runner.writer.path
    runner.close()
    runner.writer.close()
    service.checkpoints_path().unlink()
    again = make_runner(writer=service.open_session(path))
    outcome = resume_session(again)
    assert outcome.mode == "transcript" and outcome.plan.compression_used
    assert outcome.plan.refusal["code"] == "checkpoint_not_found"
    rebuilt = again.graph.get_state(again.config).values["messages"]
    assert is_summary(rebuilt[0]) and rebuilt[0].content == SUMMARY_HEADER + rec["summary"]
    assert [m.id for m in rebuilt[1:]] == [m.id for m in view[1:]]
    assert [m.id for m in rebuilt[1:1 + rec["kept_count"]]] == rec["kept_message_ids"]
    assert list(again.run("go on"))[-1].status == "completed"


def test_kill_9_during_the_summary_call(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run_env = env(home, OPENAI_BASE_URL=fake_openai.url, OPENAI_API_KEY="sk-test",
                  MTTUI_TOKEN_LIMIT="600")  # fmt: skip

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "mttui.cli", "exec", "--json", *args],
                                cwd=project, env=run_env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip

    fake_openai.add(text("one"))
    first = start(f"first {LONG}")
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    sid = events(out)[0]["session_id"]
    fake_openai.add(slow("<compressed_snapshot>never finished</compressed_snapshot>" * 20,
                         delay=0.05, pieces=400))  # fmt: skip
    second = start("--session", sid, f"second {LONG}{LONG}")
    deadline = time.monotonic() + 20
    while not any("[mttui:compress-history]" in str(r["messages"][0].get("content"))
                  for r in fake_openai.requests):  # fmt: skip
        assert time.monotonic() < deadline, "no summary call"
        time.sleep(0.02)
    time.sleep(0.3)
    os.killpg(second.pid, signal.SIGKILL)
    second.communicate(timeout=30)
    path = next((home / "history").glob(f"*/session-*-{sid}.jsonl"))
    assert not [r for r in log_records(path) if r["type"] == "compression"]
    plan = check(home, project, sid)
    assert (plan["mode"], codes(plan), plan["compression_used"]) == ("execution", [], False)
    # a summary may take several calls (one per chunk); spare replies answer the turn
    fake_openai.add(*[text("<compressed_snapshot>kept going</compressed_snapshot>")] * 4)
    third = start("--resume", sid, "third")
    out, err = third.communicate(timeout=60)
    assert third.returncode == 0, err
    assert [e["status"] for e in events(out) if e["event"] == "run_end"] == ["completed"]
    comp = [r for r in log_records(path) if r["type"] == "compression"]
    assert len(comp) == 1 and "kept going" in comp[0]["summary"]
    assert "kept going" in str(fake_openai.requests[-1]["messages"][1]["content"])
    after = recheck(home, project, sid)
    assert (after["mode"], codes(after), after["compression_used"]) == ("execution", [], True)
    index_equals_rebuild(home, tmp_path)
