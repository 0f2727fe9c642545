"""Findings of a durability review: each test reproduces one bug on real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, text, tools

from mttui.graph.events import ApprovalRequested
from mttui.graph.resume.apply import plan_for_runner, resume_session
from mttui.graph.resume.plan import check_resume
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


_SHORT_WRITE = r"""
import resource, signal, sys
from pathlib import Path
from mttui.session.log import SessionLog

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full disk: write() fails, no signal
path = Path(sys.argv[1])
log = SessionLog.create(path, "abcdef123456")
log.append("session_start", v=1, thread_id="t")
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 20, hard))
try:
    log.append("transcript_message", message={"id": "m1", "content": "x" * 200})
except OSError:
    print("append failed")
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # space again
log.append("transcript_message", message={"id": "m2", "role": "user", "content": "after"})
log.close()
"""


def test_an_append_after_a_failed_short_write_is_not_glued_to_the_torn_line(
    tmp_path: Path,
) -> None:
    """A write cut short (disk full) leaves a torn line; the next append must start on
    a line of its own (else it is lost as corrupt too) and keep ``seq`` gapless."""
    path = tmp_path / "session-20260101-000000-abcdef123456.jsonl"
    done = subprocess.run([sys.executable, "-c", _SHORT_WRITE, str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "append failed" in done.stdout
    records, stats = read_all(path)
    assert [r["type"] for r in records] == ["session_start", "transcript_message"]
    assert records[1]["message"]["id"] == "m2" and records[1]["seq"] == 2
    assert stats.corrupt_lines == 1 and stats.seq_gaps == 0


_PID_WRITE_FAILS = r"""
import resource, signal, sys
from pathlib import Path
from mttui.session.lock import SessionLock, is_locked

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path = Path(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))  # the pid cannot be written
try:
    SessionLock(path).acquire()
except OSError as exc:
    print("acquire failed:", type(exc).__name__)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
print("locked after failure:", is_locked(path))
"""


def test_a_lock_whose_acquire_failed_is_not_left_held(tmp_path: Path) -> None:
    """``acquire`` failing after the flock (writing the pid) must not keep the lock:
    else the session stays "open for writing" for the rest of the process."""
    path = tmp_path / "session-20260101-000000-abcdef123456.jsonl"
    done = subprocess.run([sys.executable, "-c", _PID_WRITE_FAILS, str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "acquire failed" in done.stdout
    assert "locked after failure: False" in done.stdout
