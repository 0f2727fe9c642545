"""MCP servers that would break a turn, for real (``support/mcp_hostile.py``): tool
names OpenAI refuses are offered under valid, stable aliases (the scripted model server
answers 400 to an invalid name, as OpenAI does); a call that never answers times out;
a 100 MB result is dropped as it is read; a server dies with a SIGKILLed ``exec``;
garbage on a server's stdout is one warning, never a traceback."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, slow, text, tools
from tests.support.logs import records
from tests.support.mcp_hostile import HOSTILE, ODD_NAMES
from tests.support.resume import cli, env, json_events

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _config(home: Path, *args: str, timeout: float | None = None, extra: str = "") -> Path:
    lines = ["[mcp_servers.repo]", f"command = {json.dumps(sys.executable)}",
             f"args = {json.dumps([str(HOSTILE), *args])}", 'trust = "read"']
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    path = home.parent / "hostile.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def _extra(home: Path, fake: FakeOpenAI, config: Path) -> dict[str, str]:
    return {"MTTUI_CONFIG": str(config), "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "sk-test", "MCP_CALLS": str(home.parent / "calls.txt")}


def _tool_texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"]["content"] for e in events
            if e["event"] == "message" and e["message"]["role"] == "tool"]


def _aliases(home: Path, project: Path, config: Path) -> dict[str, str]:
    r = cli(home, project, "mcp", "--json", MTTUI_CONFIG=str(config))
    assert r.returncode == 0, r.stderr
    server = json.loads(r.stdout)["servers"][0]
    assert server["state"] == "ok", server
    assert set(ODD_NAMES) <= set(server["tools"])  # the real names, exact
    return dict(server["aliases"])


def test_odd_tool_names_get_valid_stable_aliases(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home)
    aliases = _aliases(home, project, config)
    assert set(aliases) == set(ODD_NAMES)  # add, hang, … keep mcp__repo__<tool>
    assert all(VALID.match(a) for a in aliases.values())
    assert len(set(aliases.values())) == len(aliases)
    # listed in the reverse order by the server: the same aliases (not order-made)
    assert _aliases(home, project, _config(home, "--reverse")) == aliases
    human = cli(home, project, "mcp", MTTUI_CONFIG=str(_config(home)))
    assert "\x1b" not in human.stdout and "line\nbreak" not in human.stdout
    assert f"{aliases['repo.search']} = repo.search" in human.stdout
    assert "esc\\x1b[31mred" in human.stdout and "line\\x0abreak" in human.stdout

    fake_openai.strict_names = True  # an invalid name anywhere: HTTP 400, as OpenAI does
    alias = aliases["repo.search"]
    fake_openai.add(tools([("c1", alias, {"query": "needle"})]), text("found it"))
    r = cli(home, project, "exec", "--json", "search", **_extra(home, fake_openai, config))
    assert r.returncode == 0, r.stderr
    assert fake_openai.rejected == []
    events = json_events(r.stdout)
    assert _tool_texts(events) == ["repo.search found needle"]
    assert [e["status"] for e in events if e["event"] == "run_end"] == ["completed"]
    offered = [t["function"]["name"] for t in fake_openai.requests[0]["tools"]]
    assert alias in offered and "mcp__repo__add" in offered
    log = records(SessionService(home, project).resolve(events[0]["session_id"]).path)
    dispatch = next(x for x in log if x["type"] == "tool_dispatch")
    assert (dispatch["tool_name"], dispatch["mcp_server"], dispatch["mcp_tool"]) == (
        alias, "repo", "repo.search")


def test_rules_name_an_aliased_tool_by_its_real_name(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home, extra='[permissions]\ndeny = ["mcp(repo/repo.search)"]\n')
    alias = _aliases(home, project, config)["repo.search"]
    fake_openai.add(tools([("c1", alias, {"query": "x"})]), text("ok"))
    r = cli(home, project, "exec", "--json", "go", **_extra(home, fake_openai, config))
    assert r.returncode == 0, r.stderr
    assert _tool_texts(json_events(r.stdout)) == ["denied by rule `mcp(repo/repo.search)`"]


def test_a_call_that_never_answers_times_out_and_the_turn_goes_on(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home, timeout=1)
    fake_openai.add(tools([("c1", "mcp__repo__hang", {})]), text("went on"))
    r = cli(home, project, "exec", "--json", "wait", **_extra(home, fake_openai, config))
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    [result] = _tool_texts(events)
    assert "timed out after 1 s" in result
    assert [e["status"] for e in events if e["event"] == "run_end"] == ["completed"]
    assert events[-1]["event"] != "error"


def _exec(home: Path, project: Path, extra: dict[str, str], prompt: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mttui.cli", "exec", "--json", prompt],
                            cwd=project, env=env(home, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _peak_rss(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    """The process's peak RSS in kB (``VmHWM``, read until it exits), its output."""
    peak = 0
    while proc.poll() is None:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            break
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        peak = max(peak, int(found.group(1)) if found else 0)
        time.sleep(0.02)
    out, err = proc.communicate(timeout=60)
    return peak, out, err


def test_a_huge_result_costs_no_more_memory_than_a_small_one(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home)
    peaks, results = {}, {}
    for size in (1000, 100_000_000):
        # the slow answer after the result keeps exec alive while its peak is read
        fake_openai.add(tools([("c1", "mcp__repo__big", {"size": size})]),
                        slow("done", delay=0.1, pieces=10))
        proc = _exec(home, project, _extra(home, fake_openai, config), "big")
        peaks[size], out, err = _peak_rss(proc)
        assert proc.returncode == 0, err
        [results[size]] = _tool_texts(json_events(out))
    # unbounded, the 100 MB answer cost ~740 MB more (the measurement)
    assert peaks[100_000_000] - peaks[1000] < 150_000, peaks
    assert results[1000] == "y" * 1000
    assert "larger than 4 MB" in results[100_000_000] and "dropped" in results[100_000_000]


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] == "Z"
    except OSError:
        return True


def test_a_sigkilled_exec_leaves_no_server_behind(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home)
    calls = home.parent / "calls.txt"
    fake_openai.add(tools([("c1", "mcp__repo__hang", {})]))
    proc = _exec(home, project, _extra(home, fake_openai, config), "hang")
    deadline = time.monotonic() + 60
    while not calls.exists() or not calls.read_text().startswith("hang "):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)
    server = int(calls.read_text().split()[1])
    assert not _gone(server)
    os.kill(proc.pid, signal.SIGKILL)  # exec alone: no cleanup of any kind can run
    proc.communicate(timeout=20)
    deadline = time.monotonic() + 10
    while not _gone(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = not _gone(server)
    if alive:
        os.kill(server, signal.SIGKILL)
    assert not alive, "the MCP server outlived the SIGKILLed exec"


def test_garbage_on_stdout_is_one_warning_never_a_traceback(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = _config(home, "--junk")
    fake_openai.add(tools([("c1", "mcp__repo__noisy", {})]),
                    tools([("c2", "mcp__repo__noisy", {})]), text("ok"))
    r = cli(home, project, "exec", "--json", "noise", **_extra(home, fake_openai, config))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Failed to parse" not in r.stderr, r.stderr
    events = json_events(r.stdout)
    assert _tool_texts(events) == ["quiet now", "quiet now"]
    warnings = [e["message"] for e in events if e["event"] == "warning"]
    assert len(warnings) == 1 and "repo" in warnings[0] and "not JSON-RPC" in warnings[0]
