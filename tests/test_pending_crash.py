"""kill -9 at every pending-input transition, then a real restart (``mttui queue …``).

After the restart nothing typed is lost (every text is a user message or still
pending), nothing is sent twice (no model call is made twice for one text),
queued items wait until the queue is resumed, and a steer that was accepted but
never read becomes an ``error`` message that never reaches the model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mttui.session.pending import NOT_DELIVERED
from mttui.session.reader import read_all
from mttui.session.transcript import fold
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.pending_driver import FIRST, SECOND, STEER, WAIT_FOR_GO
from tests.support.resume import cli, env, json_events

DRIVER = Path(__file__).parent / "support" / "pending_driver.py"


def _crash(home: Path, project: Path, fake: FakeOpenAI, fault: str) -> str:
    fake.add(tools([("call_1", "shell", {"command": WAIT_FOR_GO})]), text("steered"),
             text("first done"), text("second done"))  # fmt: skip
    proc = subprocess.run([sys.executable, str(DRIVER), str(home), str(project), fake.url, fault],
                          env=env(home), capture_output=True, text=True, timeout=60)  # fmt: skip
    (project / "go").write_text("")  # a shell left waiting by the killed process ends too
    assert proc.returncode == -9, proc.stderr
    fake.script.clear()  # from here on every model call answers "ok"
    return proc.stdout.split()[0]


def _sent(fake: FakeOpenAI, needle: str) -> int:
    """How many model calls were made *for* ``needle`` (it is their last user message)."""
    count = 0
    for body in fake.requests:
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        count += needle in last.split("\n\n")
    return count


def _messages(home: Path, project: Path, sid: str) -> list[dict[str, Any]]:
    path = next((home / "history").rglob(f"*{sid}.jsonl"))
    return fold(read_all(path)[0]).messages


# (fault, held after the restart, what the queue resume runs)
CASES = [
    ("after:pending_steer", [], []),
    ("before:pending_read", [FIRST, SECOND], [FIRST, SECOND]),
    ("after:pending_read", [FIRST, SECOND], [FIRST, SECOND]),
    ("before:pending_take", [FIRST, SECOND], [FIRST, SECOND]),
    ("after:pending_take", [SECOND], [SECOND]),
    ("after:run_end:2", [SECOND], [SECOND]),
]


@pytest.mark.parametrize(("fault", "held", "runs"), CASES, ids=[c[0] for c in CASES])
def test_kill_at_each_transition(home: Path, project: Path, fake_openai: FakeOpenAI,
                                 fault: str, held: list[str], runs: list[str]) -> None:
    sid = _crash(home, project, fake_openai, fault)
    extra = {"MTTUI_PROVIDER": "openai", "OPENAI_BASE_URL": fake_openai.url}
    log = next((home / "history").rglob(f"*{sid}.jsonl"))
    calls, size = len(fake_openai.requests), log.stat().st_size

    listed = cli(home, project, "queue", "list", sid, "--json", **extra)
    assert listed.returncode == 0, listed.stderr
    queue = json.loads(listed.stdout)
    assert [i["text"] for i in queue["items"] if i["mode"] == "queue"] == held
    assert all(i["state"] == "held" for i in queue["items"] if i["mode"] == "queue")
    assert queue["held"] == bool(held)
    # reading never drains: no model call, not a byte written to the log
    assert len(fake_openai.requests) == calls and log.stat().st_size == size

    resumed = cli(home, project, "queue", "resume", sid, "--json", "--approve", "all", **extra)
    assert resumed.returncode == 0, resumed.stderr
    lines = json_events(resumed.stdout)
    assert [e["event"] for e in lines][:2] == ["session", "resumed"]
    warned = {w["code"]: w for w in lines[1]["warnings"]}
    assert ("queue_held" in warned) == bool(held)  # resume.md: held items are reported
    assert warned.get("queue_held", {"count": 0})["count"] == len(held)
    assert len(fake_openai.requests) == calls + len(runs)
    for needle in runs:
        assert _sent(fake_openai, needle) == 1
    # nothing sent twice, nothing lost: every text is exactly one user message
    users = [m for m in _messages(home, project, sid) if m["role"] == "user"]
    typed = 0 if fault == "after:pending_steer" else 1  # killed before they were typed
    for needle in (FIRST, SECOND):
        assert _sent(fake_openai, needle) == typed - (fault == "after:pending_take"
                                                      and needle == FIRST)
        assert sum(m["content"] == needle for m in users) == typed
    steer = [m for m in users if m["content"] == STEER]
    assert len(steer) == 1 and _sent(fake_openai, STEER) <= 1
    undelivered = fault in ("after:pending_steer", "before:pending_read")  # never read
    if undelivered:
        assert steer[0]["status"] == "error" and steer[0]["error"] == NOT_DELIVERED
        assert _sent(fake_openai, STEER) == 0
    else:
        assert steer[0]["status"] == "sent"
    # what is left: the undelivered steer, to retry as a new message or to dismiss
    after = json.loads(cli(home, project, "queue", "list", sid, "--json", **extra).stdout)
    assert [(i["mode"], i["state"]) for i in after["items"]] == (
        [("steer", "failed")] if undelivered else [])
