"""Findings of a durability review: each test reproduces one bug on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, text, tools

from mttui.graph.events import ApprovalRequested
from mttui.graph.resume_apply import plan_for_runner, resume_session
from mttui.graph.resume_plan import check_resume
from mttui.session.reader import read_all
from mttui.session.service import SessionService


def test_resume_keeps_a_pending_approval_with_an_auto_approved_sibling_call(
    make_runner: Any, fake_openai: FakeOpenAI, home: Path, project: Path
) -> None:
    """One assistant message: a low-risk call (auto-approved, not asked) and a shell
    call that waits for approval. Quitting while the approval is shown and resuming
    must ask the approval again, not close the sibling and drop the approval."""
    fake_openai.add(
        tools([("call_ls", "list_dir", {"path": "."}),
               ("call_sh", "shell", {"command": "touch a.txt"})]),
        text("done"),
    )
    first = make_runner("openai", url=fake_openai.url)
    events = list(first.run("two things"))
    req = [e for e in events if isinstance(e, ApprovalRequested)][-1]
    writer = first.writer
    first.close()
    second = make_runner("openai", url=fake_openai.url, writer=writer)
    plan, _ = plan_for_runner(second)
    layout = SessionService(home, project).layout
    for peek in (True, False):
        checked = check_resume(layout, writer.project_hash, writer.session_id, peek=peek)
        assert checked.codes() == ["approval_pending"]
    out = resume_session(second)
    assert out.pending is not None and out.pending.request_id == req.request_id
    assert plan.codes() == ["approval_pending"]
    events = list(second.answer_approval(req.request_id, {"call_sh": "approve"}))
    assert events[-1].status == "completed" and (project / "a.txt").exists()
    outcomes = [(r["call_id"], r["status"]) for r in read_all(writer.path)[0]
                if r["type"] == "tool_outcome"]
    assert outcomes == [("call_ls", "success"), ("call_sh", "success")]
