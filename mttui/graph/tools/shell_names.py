"""What a shell command runs, however it is spelled, for deny rules and proposals.

A deny rule names a command (``shell(rm *)``); the command may be written
``/bin/rm``, ``\\rm``, ``r''m``, ``"rm"``, after ``FOO=1``, or behind a wrapper that
runs its arguments (``command``, ``env``, ``sudo``, ``xargs``, ``find -exec``,
``bash -c '…'``, ``eval`` …). :func:`deny_forms` gives every reading of a command a
deny rule should be tested against; where it cannot be sure (a command it did not
fully understand, a name computed at run time) it errs towards more readings, so
a deny rule matches more, never less.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .shell_parse import Command, parse_shell

# commands that run another command given in their arguments
RUNNERS = frozenset({
    "env", "sudo", "doas", "su", "runuser", "setpriv", "nice", "nohup", "time", "timeout",
    "watch", "exec", "eval", "command", "builtin", "xargs", "find", "stdbuf", "ionice",
    "chrt", "setsid", "flock", "strace", "ltrace", "chroot", "nsenter", "unshare",
    "taskset", "parallel", "busybox", "script", "ssh", "npx", "pnpx", "bunx", "uvx",
    "pipx", "systemd-run", "at", "batch", "caffeinate", "source", ".", "sg", "unbuffer",
    "expect", "fakeroot", "proot", "firejail", "bwrap", "valgrind", "gdb", "catchsegv",
    "toybox",
})
# interpreters: they run whatever program text they are given
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh",
                    "tcsh", "yash", "rbash"})
_INTERPRETER = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|perl|ruby|irb|php|lua|luajit|tclsh|wish|"
    r"rscript|r|julia|osascript|pwsh|powershell|awk|gawk|mawk|nawk|sed|gsed|jshell|"
    r"groovy|scala|kotlin|guile|racket|sbcl|ghci|runghc|elixir|erl|escript|swift)"
    r"[0-9.]*(-[0-9.]+)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_EXPANDS = re.compile(r"[*?\[]|\{.*(,|\.\.).*\}")
_MAX_DEPTH = 8
_MAX_STARTS = 200  # words tried as a command's start; past them a deny rule asks
# the reading of a shell that runs a script from a file or its input (``bash x.sh``,
# ``… | sh``): its commands are unknown here, so a deny rule asks instead of allowing
UNKNOWN_SCRIPT = "\0script"


def base_name(word: str) -> str:
    """``/usr/bin/rm`` → ``rm`` (a trailing ``/`` is kept: that is no command)."""
    return word.rsplit("/", 1)[-1] if not word.endswith("/") else word


def is_interpreter(name: str) -> bool:
    """Whether the command ``name`` runs code it is given (or other commands)."""
    base = base_name(name).lower()
    return base in SHELLS or base in RUNNERS or _INTERPRETER.fullmatch(base) is not None


def deny_forms(command: str, depth: int = 0) -> Iterator[tuple[str | None, str]]:
    """``(name, arguments)`` readings of ``command`` for deny rules; ``name`` is
    ``None`` when the command's name is only known when it runs."""
    parsed = parse_shell(command)
    for cmd in parsed.commands:
        yield from _command_forms(cmd, depth)
    if not parsed.sure:
        yield from _rough_forms(command)


def _command_forms(cmd: Command, depth: int) -> Iterator[tuple[str | None, str]]:
    words = cmd.words
    start = 0
    while start < len(words) and _ASSIGNMENT.match(words[start].raw):
        start += 1
    shown = [w.value if w.value is not None else w.raw for w in words]
    wrapped = False  # after a runner every later word may be the command it runs
    for k in range(start, len(words)):
        if k - start >= _MAX_STARTS:
            yield UNKNOWN_SCRIPT, ""
            return
        rest = " ".join(shown[k + 1:])
        name = words[k].value
        if name is None or _EXPANDS.search(words[k].raw):
            yield None, rest  # a name only known when it runs (or a glob, {a,b} …)
            yield from _rough_forms(cmd.text)
            return
        base = base_name(name)
        for spelled in (name, base):
            yield spelled, rest
            if wrapped:  # xargs, find -exec …: arguments may be added when it runs
                yield spelled, f"{rest} …".strip()
        if depth < _MAX_DEPTH:
            yield from _script_forms(base, words[k + 1:], depth)
        wrapped = wrapped or base in RUNNERS
        if not wrapped:
            return


def _script_forms(base: str, args: list, depth: int) -> Iterator[tuple[str | None, str]]:
    """The commands inside ``bash -c '…'`` and ``eval …`` (a script only known when
    it runs matches every deny rule's name)."""
    if base == "eval":
        if any(a.value is None for a in args):
            yield None, " ".join(a.raw for a in args)
            return
        yield from deny_forms(" ".join(a.value for a in args), depth + 1)
        return
    if base not in SHELLS and base not in ("su", "runuser"):
        return
    if base in SHELLS and not any(_is_c(a.value or "") for a in args):
        yield UNKNOWN_SCRIPT, ""  # a script file, or commands on its input
        return
    for n, arg in enumerate(args):
        if _is_c(arg.value or ""):
            script = args[n + 1] if n + 1 < len(args) else None
            if script is None or script.value is None:
                yield None, " ".join(a.raw for a in args[n + 1:])
            else:
                yield from deny_forms(script.value, depth + 1)
            return


def _is_c(flag: str) -> bool:
    """``-c``, ``-lc``, ``-ec`` …: the next argument is the script."""
    return flag.startswith("-") and not flag.startswith("--") and "c" in flag[1:]


def _rough_forms(command: str) -> Iterator[tuple[str | None, str]]:
    """For a command not fully understood: every word, with quotes and backslashes
    taken out, read as the start of a command."""
    flat = command.replace("\\\n", "")
    flat = re.sub(r"\$(?=['\"])", "", flat)
    flat = re.sub(r"['\"\\]", "", flat)
    words = [w for w in re.split(r"[\s;&|(){}<>,`=$]+", flat) if w]
    for k, word in enumerate(words):
        if k >= _MAX_STARTS:
            yield UNKNOWN_SCRIPT, ""
            return
        rest = " ".join(words[k + 1:])
        yield word, rest
        yield base_name(word), rest
