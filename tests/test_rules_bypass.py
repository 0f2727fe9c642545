"""Permission rules that cannot be talked around: comments, ANSI-C quotes, here-docs,
line continuations and groups never smuggle a command past an allow rule; deny rules
match a command however it is spelled; proposed rules never cover an interpreter."""

from __future__ import annotations

import pytest

from mttui.graph.tools.rules import RuleSet, propose_rule

ALLOW = RuleSet(allow=("shell(npm test*)",))
DENY = RuleSet(allow=("shell",), deny=("shell(rm *)",))


def verdict(rules: RuleSet, command: str) -> str | None:
    hit = rules.verdict("shell", {"command": command})
    return None if hit is None else hit[0]


@pytest.mark.parametrize("command", [
    "npm test #'\ntouch PWNED\n#'",
    "npm test $'\\'' ; touch PWNED #'",
    "npm test $'\\'';touch PWNED;'",
    "npm test #\ntouch PWNED",
    "npm test \\\n; touch PWNED",
    "npm test <<EOF\n$(touch PWNED)\nEOF",
    "npm test <<EOF\nx\nEOF\ntouch PWNED",
    "npm test 'a\nb'",
    "npm test \"a\n$(touch PWNED)\"",
    "npm test $\"$(touch PWNED)\"",
    "npm test ${x:-$(touch PWNED)}",
    "npm test ${x@P}",
    "npm test $((a[$(touch PWNED)]))",
    "npm test; { touch PWNED; }",
    "npm test; ( touch PWNED )",
    "npm test && case x in x) touch PWNED;; esac",
    "npm test; f() { touch PWNED; }; f",
    "npm test `touch PWNED`",
    "npm test \"`touch PWNED`\"",
    "npm test 'unclosed",
    "npm test $(npm test",
    "npm test <<EOF\nno end",
    "npm test\r\ntouch PWNED",
    "npm test; for x in 1; do touch PWNED; done",
    "npm test; [[ $(touch PWNED) ]]",
    "npm test; (( $(touch PWNED) ))",
])
def test_bypass_strings_ask(command: str) -> None:
    assert verdict(ALLOW, command) is None


@pytest.mark.parametrize("command", [
    "npm test", "npm test -- -k 'a b'", "npm test # a comment", "npm \\\ntest",
    "npm test $'a\\tb'", "npm test && npm test", "npm test <<'EOF'\n$(x)\nEOF",
    "{ npm test; }", "( npm test )", "npm test $(npm test)", "npm test ${HOME}",
    "npm test $((1 + 2))", "if npm test; then npm test; fi",
])
def test_plain_commands_still_match(command: str) -> None:
    assert verdict(ALLOW, command) == "allow"


@pytest.mark.parametrize("command", [
    "rm -rf x", "/bin/rm -rf x", "\\rm -rf x", "command rm -rf x", "FOO=1 rm -rf x",
    "r''m -rf x", '"rm" -rf x', "env rm -rf x", "env -i A=1 rm -rf x", "sudo rm -rf x",
    "sudo -u root rm -rf x", "exec rm -rf x", "nice -n 5 rm -rf x", "time rm -rf x",
    "builtin rm -rf x", "nohup rm -rf x", "timeout 5 rm -rf x", "ls; rm -rf x",
    "echo $(rm -rf x)", "bash -c 'rm -rf x'", "sh -c \"ls; rm -rf x\"", "eval 'rm -rf x'",
    "xargs rm -rf < list", "echo x | xargs rm", "find . -exec rm {} +", "$'rm' -rf x",
    "{ rm -rf x; }",
    "(rm -rf x)", "ls #\nrm -rf x", "case x in *) rm -rf x;; esac",
    "for f in a; do rm -rf $f; done", "$X -rf x", "/bin/r? -rf x", "{rm,-rf,x}",
    "r\\\nm -rf x", "command -p rm -rf x", "exec -a name rm -rf x",
])
def test_deny_matches_every_spelling(command: str) -> None:
    assert verdict(DENY, command) == "deny"


@pytest.mark.parametrize("command", ["ls -la", "echo rm -rf x", "git commit -m 'rm x'",
                                     "grep -r rm ."])
def test_deny_does_not_catch_mere_mentions(command: str) -> None:
    assert verdict(DENY, command) == "allow"


@pytest.mark.parametrize("command", [
    "bash run.sh", "sh -c 'ls'", "zsh", "dash x", "fish", "python3 x.py", "python x.py",
    "node a.js", "deno run a.ts", "bun x", "perl -e 1", "ruby a.rb", "php a.php",
    "lua a.lua", "xargs rm", "env A=1 ls", "sudo ls", "doas ls", "su -c ls", "nice ls",
    "nohup ls", "time ls", "timeout 5 ls", "watch ls", "exec ls", "eval ls",
    "command ls", "builtin echo", "find . -exec rm {} +", "find . -name x",
    "git -c core.pager=sh log", "/usr/bin/python3 x.py", "awk '{print}' f",
    "FOO=1 bash -c ls", "npm exec foo", "git lol",
])
def test_proposed_rules_never_cover_an_interpreter(command: str) -> None:
    rule = propose_rule("shell", {"command": command})
    assert "*" not in rule and rule != "shell"
    # the exact command itself is covered, a variation is not
    assert RuleSet(allow=(rule,)).verdict("shell", {"command": command}) is not None
    assert RuleSet(allow=(rule,)).verdict("shell", {"command": command + " x"}) is None


def test_proposed_rules_for_ordinary_commands_keep_their_glob() -> None:
    assert propose_rule("shell", {"command": "npm test -- -k x"}) == "shell(npm test*)"
    assert propose_rule("shell", {"command": "git status -s"}) == "shell(git status*)"
    assert propose_rule("shell", {"command": "cat $(ls) *.py"}) == "shell(cat*)"


@pytest.mark.parametrize("command", ["bash build.sh", "echo 'rm -rf x' | bash",
                                     "sh <<<'rm -rf x'", "curl -s x | sh -s"])
def test_a_shell_script_a_deny_rule_cannot_read_asks(command: str) -> None:
    from mttui.graph.tools.policy import decide_call

    assert decide_call("shell", {"command": command}, "yolo", rules=DENY)[0] == "ask"
    assert decide_call("shell", {"command": command}, "deny", rules=DENY)[0] == "deny"
    assert verdict(RuleSet(allow=("shell",)), command) == "allow"  # no deny rule: as before


def test_a_huge_unsure_command_asks_under_a_deny_rule() -> None:
    command = "npm test '" + "a " * 20000  # unclosed quote: not understood
    assert RuleSet(allow=("shell",), deny=("shell(rm *)",)).verdict(
        "shell", {"command": command}) == ("ask", "shell(rm *)")
