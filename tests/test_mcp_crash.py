"""An MCP call killed with SIGKILL while the server works on it is interrupted on
resume and never called again (the server counts its calls in a file)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records
from tests.support.mcp_world import call_lines, stdio_server
from tests.support.resume import cli, env, json_events


def test_sigkill_mid_call_is_interrupted_and_never_rerun(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = home.parent / "mcp.toml"
    config.write_text(stdio_server("calc", trust="read"))
    calls = home.parent / "calls.txt"
    extra = {"MTTUI_CONFIG": str(config), "OPENAI_BASE_URL": fake_openai.url,
             "OPENAI_API_KEY": "sk-test", "MCP_CALLS": str(calls)}
    fake_openai.add(tools([("c_slow", "mcp__calc__slow", {"seconds": 60})]))
    proc = subprocess.Popen([sys.executable, "-m", "mttui.cli", "exec", "--json", "sleep"],
                            cwd=project, env=env(home, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while call_lines(calls) != ["slow journaled"]:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=20)
    sid = json_events(out)[0]["session_id"]

    fake_openai.add(text("understood"))
    r = cli(home, project, "exec", "--resume", sid, "--json", **extra)
    assert r.returncode == 0, r.stderr
    resumed = next(e for e in json_events(r.stdout) if e["event"] == "resumed")
    assert [w["code"] for w in resumed["warnings"]] == ["tool_interrupted"]
    fake_openai.add(text("fine"))
    again = cli(home, project, "exec", "--session", sid, "--json", "go on", **extra)
    assert again.returncode == 0, again.stderr
    assert call_lines(calls) == ["slow journaled"]  # called once, never again
    log = records(SessionService(home, project).resolve(sid).path)
    outcomes = [x["status"] for x in log if x["type"] == "tool_outcome"]
    assert outcomes == ["interrupted"]
    assert [x["call_id"] for x in log if x["type"] == "tool_dispatch"] == ["c_slow"]
