"""MCP servers for real: a stdio server written with the ``mcp`` SDK and the same
server over streamable HTTP on 127.0.0.1; the model (the scripted OpenAI-compatible
server) calls their tools as ``mcp__<server>__<tool>``; trust, approvals and rules
apply; ``tool_dispatch`` is in the log before the server sees the call; a server
that fails to start is a warning and the run completes; ``mttui mcp --json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.mcp_world import call_lines, http_server, http_server_entry, stdio_server
from tests.support.resume import cli, json_events


def _run(home: Path, project: Path, fake: FakeOpenAI, config: str, *args: str,
         **extra: str) -> tuple[int, list[dict[str, Any]], str]:
    path = home.parent / "mcp-config.toml"
    path.write_text(config)
    calls = home.parent / "calls.txt"
    r = cli(home, project, "exec", "--json", *args, MTTUI_CONFIG=str(path),
            OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test", MCP_CALLS=str(calls), **extra)
    return r.returncode, json_events(r.stdout), r.stderr


def _tool_texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"]["content"] for e in events
            if e["event"] == "message" and e["message"]["role"] == "tool"]


def test_a_stdio_tool_is_asked_then_called_once_journaled(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = stdio_server("calc", env={"PROBE": "from-config"})
    fake_openai.add(tools([("c1", "mcp__calc__add", {"a": 2, "b": 40})]), text("done"))
    code, events, err = _run(home, project, fake_openai, config, "add them")
    assert code == 3, err  # trust = "ask": medium risk asks
    request = next(e for e in events if e["event"] == "approval_request")
    assert request["tool_calls"][0]["tool_name"] == "mcp__calc__add"
    assert request["tool_calls"][0]["risk_level"] == "medium"
    assert call_lines(home.parent / "calls.txt") == []  # asked: not called
    code, events, err = _run(home, project, fake_openai, config, "--resume",
                             events[0]["session_id"], "--approve", "all")
    assert code == 0, err
    names = [e["event"] for e in events]
    assert names.index("tool_dispatch") < names.index("tool_outcome")
    assert _tool_texts(events) == ["sum=42"]
    assert call_lines(home.parent / "calls.txt") == ["add journaled"]
    body = fake_openai.requests[0]
    offered = [t["function"]["name"] for t in body["tools"]]
    assert {"mcp__calc__add", "mcp__calc__slow", "shell"} <= set(offered)


def test_trust_read_never_asks_and_env_reaches_the_server(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = stdio_server("calc", trust="read", env={"PROBE": "from-config"})
    fake_openai.add(tools([("c1", "mcp__calc__env_probe", {})]), text("done"))
    code, events, err = _run(home, project, fake_openai, config, "probe", "--approve", "ask")
    assert code == 0, err
    assert _tool_texts(events) == ["from-config"]


def test_rules_apply_to_mcp_tools(home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = stdio_server("calc") + '\n[permissions]\nallow = ["mcp__calc__add"]\n' \
        'deny = ["mcp(calc/slow)"]\n'
    fake_openai.add(tools([("c1", "mcp__calc__add", {"a": 1, "b": 1}),
                           ("c2", "mcp__calc__slow", {"seconds": 0})]), text("done"))
    code, events, err = _run(home, project, fake_openai, config, "go", "--approve", "ask")
    assert code == 0, err
    assert _tool_texts(events) == ["sum=2", "denied by rule `mcp(calc/slow)`"]
    assert call_lines(home.parent / "calls.txt") == ["add journaled"]


def test_a_server_that_fails_to_start_is_a_warning(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    config = stdio_server("broken", "--fail") + stdio_server("calc", trust="read")
    fake_openai.add(tools([("c1", "mcp__broken__add", {"a": 1, "b": 1})]), text("went on"))
    code, events, err = _run(home, project, fake_openai, config, "go", "--approve", "all")
    assert code == 0, err
    assert "is not running" in _tool_texts(events)[0]  # the model called it anyway
    warnings = [e for e in events if e["event"] == "warning"]
    assert len(warnings) == 1 and "broken" in warnings[0]["message"]
    assert "cannot start (scripted)" in warnings[0]["message"]
    assert [e["status"] for e in events if e["event"] == "run_end"][-1] == "completed"
    offered = [t["function"]["name"] for t in fake_openai.requests[0]["tools"]]
    assert "mcp__calc__add" in offered and not any("broken" in n for n in offered)


def test_streamable_http_server(home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    calls = home.parent / "calls.txt"
    with http_server(calls, home) as url:
        config = http_server_entry("web", url, trust="read")
        fake_openai.add(tools([("c1", "mcp__web__add", {"a": 20, "b": 22})]), text("ok"))
        code, events, err = _run(home, project, fake_openai, config, "add over http")
        assert code == 0, err
        assert _tool_texts(events) == ["sum=42"]
        assert call_lines(calls) == ["add journaled"]
        listed = cli(home, project, "mcp", "--json",
                     MTTUI_CONFIG=str(home.parent / "mcp-config.toml"))
        assert json.loads(listed.stdout)["servers"][0]["state"] == "ok"


def test_mcp_json_lists_servers(home: Path, project: Path) -> None:
    config = home.parent / "c.toml"
    config.write_text(stdio_server("calc") + stdio_server("broken", "--fail")
                      + stdio_server("off", enabled=False))
    r = cli(home, project, "mcp", "--json", MTTUI_CONFIG=str(config))
    assert r.returncode == 0, r.stderr
    servers = json.loads(r.stdout)["servers"]
    assert servers[0] == {"name": "calc", "state": "ok", "error": None,
                          "tools": ["add", "env_probe", "slow"], "aliases": {}}
    assert servers[1]["name"] == "broken" and servers[1]["state"] == "error"
    assert "cannot start" in servers[1]["error"]
    assert servers[2] == {"name": "off", "state": "disabled", "error": None, "tools": [],
                          "aliases": {}}
    assert call_lines(home.parent / "calls.txt") == []  # listing calls nothing
    human = cli(home, project, "mcp", MTTUI_CONFIG=str(config))
    assert "calc" in human.stdout and "add, env_probe, slow" in human.stdout


def test_bad_mcp_config_is_one_line(home: Path, project: Path) -> None:
    config = home.parent / "c.toml"
    config.write_text('[mcp_servers.x]\ntrust = "always"\ncommand = "y"\n')
    r = cli(home, project, "mcp", "--json", MTTUI_CONFIG=str(config))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "trust" in r.stderr


def test_servers_start_only_when_a_run_needs_tools(
        home: Path, project: Path, fake_openai: FakeOpenAI) -> None:
    starts = home.parent / "starts.txt"
    config = stdio_server("calc", env={"MCP_STARTS": str(starts)})
    fake_openai.add(text("hello"))
    code, events, err = _run(home, project, fake_openai, config, "hi")
    assert code == 0, err
    assert call_lines(starts) == ["start"]
    sid = events[0]["session_id"]
    path = home.parent / "mcp-config.toml"
    for args in (("resume-check", sid, "--json"), ("sessions", "--json"),
                 ("history", sid, "--json"), ("permissions", "--json")):
        r = cli(home, project, *args, MTTUI_CONFIG=str(path))
        assert r.returncode == 0, r.stderr
    assert call_lines(starts) == ["start"]  # reading starts no server
