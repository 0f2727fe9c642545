"""Slash commands as the PROMPT of ``mttui exec``: handled locally, checked against the
requests the scripted server receives (``/clear``, ``/model``), usage totals, unknown
commands, and the index rebuilt by ``reindex`` agreeing with the incremental one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeOpenAI, text
from tests.support.logs import records
from tests.support.resume import cli, json_events


def _env(fake: FakeOpenAI, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test",
            "MTTUI_CONFIG": str(tmp_path / "config.toml"), **extra}  # fmt: skip


def _exec(home: Path, project: Path, env: dict[str, str], *args: str) -> Any:
    return cli(home, project, "exec", *args, **env)


def _first(home: Path, project: Path, env: dict[str, str], prompt: str) -> str:
    r = _exec(home, project, env, "--json", prompt)
    assert r.returncode == 0, r.stderr
    return str(json_events(r.stdout)[0]["session_id"])


def _users(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "user"]


def _sessions(home: Path, project: Path, env: dict[str, str]) -> dict[str, Any]:
    r = cli(home, project, "sessions", "--json", **env)
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def test_clear_starts_a_new_thread_the_model_sees_nothing_before(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    env = _env(fake_openai, tmp_path)
    sid = _first(home, project, env, "first question")
    r = _exec(home, project, env, "--session", sid, "second question")
    assert r.returncode == 0, r.stderr
    assert _users(fake_openai.requests[-1]) == ["first question", "second question"]
    q = cli(home, project, "queue", "add", sid, "queued before the clear", **env)
    assert q.returncode == 0, q.stderr

    r = _exec(home, project, env, "--session", sid, "--json", "/clear")
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    slash = [e for e in events if e["event"] == "slash"][0]
    assert slash["command"] == "clear" and slash["dropped"] == 1
    assert len(fake_openai.requests) == 2  # nothing sent

    r = _exec(home, project, env, "--session", sid, "--json", "after the clear")
    assert r.returncode == 0, r.stderr
    assert _users(fake_openai.requests[-1]) == ["after the clear"]
    resumed = [e for e in json_events(r.stdout) if e["event"] == "resumed"][0]
    assert resumed["mode"] == "execution" and resumed["warnings"] == []
    log = records(_path(home, project, sid))
    clears = [rec for rec in log if rec["type"] == "session_clear"]
    assert len(clears) == 1 and clears[0]["thread_id"]
    q = cli(home, project, "queue", "list", sid, "--json", **env)
    assert json.loads(q.stdout)["items"] == []
    h = cli(home, project, "history", sid, "--json", **env)
    contents = [m["content"] for m in json.loads(h.stdout)["messages"]]
    assert "first question" in contents  # still readable


def _path(home: Path, project: Path, sid: str) -> Path:
    from mttui.session.service import SessionService

    return SessionService(home, project).resolve(sid).path


def test_model_switch_is_kept_across_restarts_unless_the_flag_overrides(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    env = _env(fake_openai, tmp_path, MTTUI_MODEL="env-model")
    sid = _first(home, project, env, "hello")
    assert fake_openai.requests[-1]["model"] == "env-model"
    r = _exec(home, project, env, "--session", sid, "/model other-model")
    assert r.returncode == 0, r.stderr
    assert "other-model" in r.stdout
    r = _exec(home, project, env, "--session", sid, "next")
    assert r.returncode == 0, r.stderr
    assert fake_openai.requests[-1]["model"] == "other-model"
    row = _sessions(home, project, env)["sessions"][0]
    assert row["model"] == "other-model"
    r = _exec(home, project, env, "--session", sid, "--model", "flag-model", "flagged")
    assert r.returncode == 0, r.stderr
    assert fake_openai.requests[-1]["model"] == "flag-model"
    r = _exec(home, project, env, "--session", sid, "again")
    assert fake_openai.requests[-1]["model"] == "other-model"
    r = _exec(home, project, env, "--session", sid, "/model")
    assert r.returncode == 0 and "other-model" in r.stdout


def test_usage_is_the_sum_of_the_server_reported_usage_with_cost(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    (tmp_path / "config.toml").write_text(
        '[pricing."gpt-4o-mini"]\ninput = 1.5\noutput = 6.0\n')
    env = _env(fake_openai, tmp_path)
    fake_openai.add(text("a", usage=(100, 20)), text("b", usage=(300, 40)))
    sid = _first(home, project, env, "one")
    r = _exec(home, project, env, "--session", sid, "two")
    assert r.returncode == 0, r.stderr
    ends = [rec for rec in records(_path(home, project, sid)) if rec["type"] == "run_end"]
    assert [e["usage"]["input_tokens"] for e in ends] == [100, 300]
    usage = _sessions(home, project, env)["sessions"][0]["usage"]
    cost = (400 * 1.5 + 60 * 6.0) / 1e6
    assert usage["input_tokens"] == 400 and usage["output_tokens"] == 60
    assert abs(usage["cost_usd"] - cost) < 1e-9
    r = _exec(home, project, env, "--session", sid, "/usage")
    assert r.returncode == 0, r.stderr
    assert "400 in, 60 out" in r.stdout and "$0.0010" in r.stdout
    before = _sessions(home, project, env)
    assert cli(home, project, "reindex", **env).returncode == 0
    assert _sessions(home, project, env) == before


def test_unpriced_usage_has_a_null_cost(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    env = _env(fake_openai, tmp_path)
    _first(home, project, env, "one")
    usage = _sessions(home, project, env)["sessions"][0]["usage"]
    assert usage == {"input_tokens": 11, "output_tokens": 7, "cost_usd": None}


def test_unknown_command_is_a_usage_error_and_never_sent(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    env = _env(fake_openai, tmp_path)
    r = _exec(home, project, env, "/frobnicate now")
    assert r.returncode == 2
    assert "unknown command /frobnicate (try /help)" in r.stderr
    assert fake_openai.requests == []
    r = _exec(home, project, env, "/help")
    assert r.returncode == 0 and "/clear" in r.stdout and "/model" in r.stdout


def test_offline_triggers_still_reach_the_offline_model(home: Path, project: Path) -> None:
    (project / "a.txt").write_text("x")
    r = cli(home, project, "exec", "--provider", "offline", "--json", "/ls")
    assert r.returncode == 0, r.stderr
    assert any(e["event"] == "tool_dispatch" for e in json_events(r.stdout))
