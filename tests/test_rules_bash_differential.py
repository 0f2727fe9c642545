"""The shell reader checked against bash itself, over a generated corpus of tricky
commands: whenever the rule ``shell(npm test*)`` allows a command, bash, running it
for real (with nothing on ``PATH``: every command lands in a logging
``command_not_found_handle``, builtins in a logging ``DEBUG`` trap), runs nothing
but ``npm test…``. Every command is run twice, with unknown commands succeeding
and failing, so both sides of ``&&``/``||`` and ``if`` are taken."""

from __future__ import annotations

import fnmatch
import os
import random
import subprocess
from pathlib import Path

import pytest

from mttui.graph.tools.rules import RuleSet

GLOB = "npm test*"
RULES = RuleSet(allow=(f"shell({GLOB})",))
TRACER = r"""
command_not_found_handle() { printf 'X %s\0' "$*" >&3; return "$__st"; }
PATH=/nonexistent-path
set -T
while IFS= read -r -d '' __cmd; do
  printf 'B\0' >&3
  ( trap '[[ ${FUNCNAME[0]-} == command_not_found_handle ]] ||
          { printf "D %s\0" "$BASH_COMMAND" >&3; ((++__n < 60)) || exit 0; }' DEBUG
    __n=0; eval "$__cmd"; wait ) </dev/null >/dev/null 2>&1
  printf 'E\0' >&3
done
"""
OWN = {"eval \"$__cmd\"", "wait", "__n=0", "((++__n < 60))"}  # the tracer's own commands

ARGS = [" -k x", " 'a b'", ' "a b"', " a\\ b", " $HOME", " ${HOME}", ' "$HOME"',
        " $'a\\tb'", ' $"x"', " # note", " 2>&1", " </dev/null", " a#b", " '#'", ' "#"',
        " \\#x", " $((1+2))", " {a,b}", " ~", " *.py", " -- --x=1", " $'\\x41'",
        " <<<word", " \\\n-q", " $(npm test)", " `npm test`", " <(npm test)",
        " <<'E'\n$(touch PWNED)\nE\n", " <<E\nplain\nE\n"]
HOSTILE = [" #'\ntouch PWNED\n#'", " $'\\'' ; touch PWNED #'", "; touch PWNED",
           "\ntouch PWNED", " $(touch PWNED)", " `touch PWNED`", ' "$(touch PWNED)"',
           " <<E\n$(touch PWNED)\nE\n", " <<E\nE\ntouch PWNED", " \\\n; touch PWNED",
           " '\\''; touch PWNED; '\\''", ' "\\"; touch PWNED; \\""',
           " \\'; touch PWNED; \\'", " $'\\x27'; touch PWNED", ' $"\\"; touch PWNED"',
           " & touch PWNED", " | touch PWNED", " || touch PWNED", " && touch PWNED",
           " ${x:-$(touch PWNED)}", " ${x:-`touch PWNED`}", " $'\\n'; touch PWNED",
           " \"'\"; touch PWNED; \"'\"", " <<-E\n\t$(touch PWNED)\n\tE\n",
           " $(( $(touch PWNED) ))", " ${x@P}", " <(touch PWNED)", " >(touch PWNED)",
           " $(: ')'; touch PWNED)", " $(case x in x) touch PWNED;; esac)",
           " \"$(echo ')'\"; touch PWNED", " # \\\ntouch PWNED", " $'#'\ntouch PWNED"]
PIECES = ["'", '"', "\\", "$'", '$"', "#", "\n", ";", "(", ")", "{ ", " }", "`", "$(",
          "&", "|", "<", ">", " ", "\t", "x", "E", "<<E\n", "\nE\n", "${", "}", "$((",
          "))", " touch PWNED", " npm test", "\\\n", "!", "=", "*"]
SHAPES = ["{X}", "{ {X}; }", "( {X} )", "if {X}; then {X}; fi", "{X} && {X}", "{X} || {X}",
          "{X} | {X}", "{X}\n{X}", "{X} $({X})", "! {X}", "while {X}; do {X}; done"]


def corpus(seed: int = 36, size: int = 3000) -> list[str]:
    rnd = random.Random(seed)
    out: list[str] = []
    while len(out) < size:
        kind = rnd.random()
        if kind < 0.45:  # npm test with a few fragments, benign or not
            frags = ARGS + HOSTILE if rnd.random() < 0.6 else ARGS
            cmd = "npm test" + "".join(rnd.choice(frags) for _ in range(rnd.randint(0, 3)))
        elif kind < 0.75:  # raw characters
            cmd = "npm test " + "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 9)))
        else:  # nested in a compound command
            inner = "npm test" + "".join(rnd.choice(ARGS) for _ in range(rnd.randint(0, 2)))
            shape = rnd.choice(SHAPES)
            if rnd.random() < 0.3:
                shape = shape.replace("{X}", rnd.choice(SHAPES), 1)
            cmd = shape.replace("{X}", inner)
            if rnd.random() < 0.4:
                cmd += rnd.choice(HOSTILE)
        out.append(cmd)
    return out


def run_in_bash(commands: list[str], status: int, cwd: Path) -> list[list[str]]:
    """What bash ran for each command: ``D`` commands as written (the ``DEBUG``
    trap), ``X`` the argv of the commands it looked for on ``PATH``."""
    read_end, write_end = os.pipe()
    with subprocess.Popen(
            ["bash", "--norc", "--noprofile", "-c", f"exec 3>&{write_end}; {TRACER}"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=cwd, pass_fds=(write_end,),
            env={"__st": str(status), "HOME": str(cwd), "LC_ALL": "C"}) as proc:
        os.close(write_end)
        assert proc.stdin is not None
        proc.stdin.write("".join(c + "\0" for c in commands).encode())
        proc.stdin.close()
        with os.fdopen(read_end, "rb") as fh:
            data = fh.read()
        proc.wait(timeout=120)
    runs: list[list[str]] = []
    for item in data.decode(errors="replace").split("\0"):
        if item == "B":
            runs.append([])
        elif item[:2] in ("D ", "X ") and runs and item[2:] not in OWN:
            runs[-1].append(item)
    return runs


def allowed(command: str) -> bool:
    return RULES.verdict("shell", {"command": command}) is not None


def test_the_oracle_sees_what_bash_runs(tmp_path: Path) -> None:
    seen = run_in_bash(["npm test #'\ntouch PWNED\n#'", "npm test $'\\'' ; touch PWNED #'",
                     "npm test 'a b'"], 0, tmp_path)
    assert "X touch PWNED" in seen[0] and "X touch PWNED" in seen[1]
    assert seen[2] == ["D npm test 'a b'", "X npm test a b"]


def test_allowed_commands_run_only_what_the_rule_allows(tmp_path: Path) -> None:
    commands = corpus()
    ok = [c for c in commands if allowed(c)]
    # the corpus is not trivial: many commands are allowed, many are not
    assert len(ok) > len(commands) // 5 and len(commands) - len(ok) > len(commands) // 5
    for status in (0, 1):
        runs = run_in_bash(ok, status, tmp_path)
        assert len(runs) == len(ok)
        for command, ran in zip(ok, runs, strict=True):
            wrong = [r for r in ran if not fnmatch.fnmatchcase(r[2:], GLOB)]
            assert not wrong, f"allowed {command!r} but bash ran {wrong}"
        assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("seed", [1, 2])
def test_corpus_is_seeded(seed: int) -> None:
    assert corpus(seed, 50) == corpus(seed, 50)
