"""The demo's sessions are made by real runs: each has a checkpoint, and the ones meant
to show something (an approval that waits, an interrupted tool) show exactly that."""

from __future__ import annotations

from pathlib import Path

from mttui.cli.tui import reset_demo
from mttui.config import Settings
from mttui.core.drive import drive
from mttui.core.handle import ApprovalAnswer, SessionHandle
from mttui.core.resume_check import check
from mttui.demo import build_demo
from mttui.session.resume.check import ResumePlan
from mttui.session.service import SessionService

OFFLINE = Settings(provider="offline", model="offline", approval="ask")


def _plans(home: Path, project: Path) -> dict[str, ResumePlan]:
    service = SessionService(home, project)
    plans = {}
    for info in service.list_sessions().sessions:
        plan, found = check(service, info.id)
        assert found
        plans[info.title or ""] = plan
    return plans


def test_every_demo_session_has_its_checkpoint(home: Path) -> None:
    project = home / "project"
    build_demo(home, project)
    plans = _plans(home, project)
    assert len(plans) == 6
    for title, plan in plans.items():
        assert plan.refusal is None, (title, plan.refusal)
        assert plan.mode == "execution", title
        assert plan.checked == "checkpoint", title
    codes = {title: [w.code for w in plan.warnings]
             for title, plan in plans.items()}
    assert codes["Refactor the storage layer (long session)"] == []
    assert codes["重构会话存储：快速分页与全文搜索"] == []
    assert codes["Write the release notes"] == ["queue_held"]
    assert codes["Notes with a damaged line"] == ["corrupt_lines_skipped"]
    assert codes["Run the test suite (interrupted)"] == ["tool_interrupted"]
    interrupted = plans["Run the test suite (interrupted)"]
    assert interrupted.pending_approval is None
    assert len(interrupted.interrupted_tool_calls) == 1
    assert codes["Clean the build and fix div()"] == ["approval_pending"]
    long = plans["Refactor the storage layer (long session)"]
    assert long.compression_used


def test_reset_brings_back_the_approval_after_it_was_answered(home: Path) -> None:
    project = home / "project"
    build_demo(home, project)
    service = SessionService(home, project)
    info = next(s for s in service.list_sessions().sessions
                if s.title == "Clean the build and fix div()")
    handle = SessionHandle.open(service, OFFLINE, info.id)
    try:
        request = handle.resume().pending
        assert request is not None
        drive(handle, handle.answer(request, ApprovalAnswer.for_all(request, False)),
              emit=lambda event: None, ask=lambda request: None)
    finally:
        handle.close()
    assert not service.get(info.id).status.awaiting_approval
    assert build_demo(home, project)  # a second run keeps the answered session
    assert not _plans(home, project)["Clean the build and fix div()"].pending_approval
    reset_demo(home)
    build_demo(home, project)
    plan = _plans(home, project)["Clean the build and fix div()"]
    assert plan.pending_approval is not None
    assert [c["tool_name"] for c in plan.pending_approval["tool_calls"]] == [
        "shell", "edit_file"]
