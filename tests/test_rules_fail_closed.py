"""Rules end to end: the issue's bypass strings through a real ``mttui exec`` (the
offline model's ``!COMMAND``) never run without approval, and a saved-rules file
that does not parse fails closed (allow rules ignored, deny rules kept) and every
run says so, naming the file, the line and its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.session.rules import add_rule, rules_path
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.resume import cli, json_events

BYPASSES = ["npm test #'\ntouch PWNED\n#'", "npm test $'\\'' ; touch PWNED #'"]


def _outcomes(stdout: str) -> list[str]:
    return [e["status"] for e in json_events(stdout) if e["event"] == "tool_outcome"]


@pytest.mark.parametrize("command", BYPASSES)
def test_bypass_strings_are_refused_by_exec(home: Path, project: Path, command: str,
                                            fake_openai: FakeOpenAI) -> None:
    """The model asks for the command (a newline cannot go through the offline
    model's one-line ``!COMMAND``, so a scripted OpenAI-compatible server)."""
    add_rule(rules_path(home, project), project, "shell(npm test*)")
    for sandbox in ("off", "workspace"):
        fake_openai.add(tools([("call_1", "shell", {"command": command})]), text("done"))
        r = cli(home, project, "exec", "--json", "--approve", "none", "run the tests",
                MTTUI_SANDBOX=sandbox, OPENAI_BASE_URL=fake_openai.url,
                OPENAI_API_KEY="sk-test", MTTUI_PROVIDER="openai")
        assert r.returncode == 0, r.stderr
        assert _outcomes(r.stdout) == ["denied"]
        assert "approval_request" in [e["event"] for e in json_events(r.stdout)]
        assert not (project / "PWNED").exists()


def test_single_line_bypass_through_the_offline_model(home: Path, project: Path) -> None:
    add_rule(rules_path(home, project), project, "shell(npm test*)")
    r = cli(home, project, "exec", "--json", "--approve", "none", f"!{BYPASSES[1]}")
    assert r.returncode == 0 and _outcomes(r.stdout) == ["denied"], r.stderr
    assert not (project / "PWNED").exists()


def test_allowed_command_still_runs(home: Path, project: Path) -> None:
    add_rule(rules_path(home, project), project, "shell(touch made*)")
    r = cli(home, project, "exec", "--json", "--approve", "none", "!touch made.txt # note")
    assert r.returncode == 0 and _outcomes(r.stdout) == ["success"], r.stderr
    assert (project / "made.txt").exists()


def _broken(home: Path, project: Path) -> Path:
    path = rules_path(home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('project = "x"\nallow = [\n  "shell",\n]\ndeny = [\n  "shell(rm *)",\n'
                    '  "shell(curl*)" oops\n]\n')
    return path


def test_broken_rules_file_keeps_deny_and_ignores_allow(home: Path, project: Path) -> None:
    path = _broken(home, project)
    (project / "keep.txt").write_text("x")
    r = cli(home, project, "exec", "--approve", "all", "!rm keep.txt")
    assert r.returncode == 0, r.stderr
    assert (project / "keep.txt").exists()  # denied by the rule kept from the broken file
    assert f"{path}:7:" in r.stderr and "oops" in r.stderr
    assert "allow rules are ignored" in r.stderr
    asks = cli(home, project, "exec", "--json", "--approve", "ask", "!ls")
    assert asks.returncode == 3  # the allow rule `shell` of the broken file is ignored
    warnings = [e for e in json_events(asks.stdout) if e["event"] == "warning"]
    assert any(f"{path}:7:" in w["message"] for w in warnings)


def test_permissions_names_the_broken_line(home: Path, project: Path) -> None:
    path = _broken(home, project)
    r = cli(home, project, "permissions")
    assert r.returncode == 0, r.stderr
    assert f"{path}:7:" in r.stderr and "'\"shell(curl*)\" oops'" in r.stderr
    assert "shell(rm *)" in r.stdout and "allow" not in r.stdout.split("RULE", 1)[1]
    j = cli(home, project, "permissions", "--json")
    assert f"{path}:7:" in j.stderr
    assert {"rule": "shell(rm *)", "effect": "deny", "source": "project"} in json_events(
        j.stdout)[0]["rules"]


def test_a_deny_rule_that_is_no_rule_is_named(home: Path, project: Path) -> None:
    path = rules_path(home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('deny = [\n  "shell(rm *",\n]\n')
    r = cli(home, project, "permissions")
    assert f"{path}:2:" in r.stderr and "deny rule is ignored" in r.stderr
