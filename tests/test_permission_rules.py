"""Permission rules: parsing, shell commands matched part by part, paths normalized,
deny beating allow, and the rule the approval dialog proposes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.graph.tools.rules import RuleError, RuleSet, parse_rule, propose_rule, split_shell


def allows(rule: str, tool: str, args: dict[str, object], project: Path | None = None) -> bool:
    return RuleSet(allow=(rule,)).verdict(tool, args, project) == ("allow", rule)


def sh(command: str) -> dict[str, object]:
    return {"command": command}


@pytest.mark.parametrize("command", ["npm test", "npm test -- -k x", "npm test 2>&1"])
def test_shell_rule_allows_the_command_and_its_arguments(command: str) -> None:
    assert allows("shell(npm test*)", "shell", sh(command))


@pytest.mark.parametrize("command", [
    "npm test && rm -rf x", "npm test; curl http://evil.example", "npm test $(rm x)",
    "npm test `rm x`", "npm test\nrm x", "npm test | sh", "npm test & rm x",
    "npm test || rm x", "npm test > out.txt", "npm test >> out.txt", "npm test &> out",
    "npm test >| out", 'npm test "$(rm x)"', "npm test <(rm x)", "rm x; npm test",
    "npm test $(npm test; rm x)",
])
def test_a_compound_or_redirected_command_is_not_allowed(command: str) -> None:
    assert not allows("shell(npm test*)", "shell", sh(command))


def test_every_part_matching_is_allowed() -> None:
    assert allows("shell(npm test*)", "shell", sh("npm test a && npm test b"))
    assert allows("shell(npm test*)", "shell", sh("npm test 'a; rm x' \"b && c\""))


def test_split_keeps_quoted_separators() -> None:
    assert split_shell("echo 'a;b' && ls").parts == ["echo 'a;b'", "ls"]
    assert split_shell("echo $(date)").parts == ["date", "echo $(…)"]


def test_file_rule_allows_paths_inside_only() -> None:
    assert allows("edit_file(src/**)", "edit_file", {"path": "src/a/b.py"})
    assert allows("edit_file(src/**)", "edit_file", {"path": "./src/a.py"})
    assert not allows("edit_file(src/**)", "edit_file", {"path": "src/../setup.py"})
    assert not allows("edit_file(src/**)", "edit_file", {"path": "setup.py"})
    assert not allows("edit_file(src/**)", "edit_file", {"path": "/etc/src/x"})
    assert not allows("edit_file(src/*)", "edit_file", {"path": "src/a/b.py"})
    assert not allows("edit_file(src/**)", "write_file", {"path": "src/a.py"})


def test_file_rule_follows_symlinks_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "link").symlink_to(tmp_path)
    assert allows("edit_file(src/**)", "edit_file", {"path": "src/a.py"}, tmp_path)
    assert not allows("edit_file(src/**)", "edit_file", {"path": "src/link/setup.py"}, tmp_path)


def test_deny_beats_allow() -> None:
    rules = RuleSet(allow=("shell",), deny=("shell(rm *)",))
    assert rules.verdict("shell", sh("rm -rf x")) == ("deny", "shell(rm *)")
    assert rules.verdict("shell", sh("ls && rm -rf x")) == ("deny", "shell(rm *)")
    assert rules.verdict("shell", sh("ls")) == ("allow", "shell")
    assert RuleSet(deny=("edit_file(src/**)",)).verdict(
        "edit_file", {"path": "src/../src/a.py"}) == ("deny", "edit_file(src/**)")


def test_a_tool_rule_without_glob_and_mcp_rules() -> None:
    assert allows("read_file", "read_file", {"path": "x"})
    assert allows("mcp__files__*", "mcp__files__read", {})
    assert allows("mcp(files/read*)", "mcp__files__read_all", {})
    assert not allows("mcp(files/read*)", "mcp__other__read", {})
    assert RuleSet().verdict("shell", sh("ls")) is None


@pytest.mark.parametrize("bad", ["", "shell(", "shell()", "(x)", "sh ell"])
def test_bad_rules_are_refused(bad: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(bad)


def test_proposed_rules() -> None:
    assert propose_rule("shell", sh("npm test -- -k x")) == "shell(npm test*)"
    assert propose_rule("shell", sh("pytest -q tests")) == "shell(pytest*)"
    assert propose_rule("shell", sh("ls")) == "shell(ls*)"
    assert propose_rule("edit_file", {"path": "src/a/b.py"}) == "edit_file(src/a/**)"
    assert propose_rule("write_file", {"path": "setup.py"}) == "write_file(**)"
    assert propose_rule("mcp__srv__echo", {"text": "x"}) == "mcp__srv__echo"
