"""Permission rules: ``TOOL`` or ``TOOL(glob)``, and whether one matches a call.

- ``shell(glob)``: the glob matches the command, read as bash reads it
  (:mod:`.shell_parse`). A compound command (``;``, ``&&``, ``||``, ``|``, ``&``,
  ``$(…)``, backticks, ``<(…)``, newlines, groups) matches an *allow* rule only if
  every simple command matches; a command not fully understood, a part with a
  newline or other control character, and an output redirection (``>``, ``>>``,
  ``>|``, ``&>``) never match an allow rule. A *deny* rule matches when the whole
  command, a part, or any reading of a part's command name matches (quotes,
  paths, assignments and wrappers seen through: :mod:`.shell_names`); a shell
  script it cannot read makes it ask.
- file tools (``read_file``, ``list_dir``, ``search_files``, ``write_file``,
  ``edit_file``): the glob matches the normalized path relative to the project
  (``*`` within a directory, ``**`` across directories); a path that leaves the
  project (``src/../../x``, ``/etc``) never matches an allow rule.
- MCP tools (``mcp__SERVER__TOOL``): ``mcp__SERVER__TOOL`` or a glob on the name
  (``mcp__github__*``); ``mcp(glob)`` matches ``SERVER/TOOL`` (``mcp(github/*)``).
- Any other ``TOOL(glob)``: the glob matches the arguments as compact JSON.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .shell_names import UNKNOWN_SCRIPT, deny_forms, is_interpreter
from .shell_parse import parse_shell

FILE_TOOLS = ("read_file", "list_dir", "search_files", "write_file", "edit_file")
_NAME = re.compile(r"^[A-Za-z0-9_*?.\-]+$")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


class RuleError(ValueError):
    """A rule that cannot be parsed (the message says why, in one line)."""


@dataclass(frozen=True)
class Rule:
    tool: str  # a tool name, or a glob on tool names
    glob: str | None = None

    @property
    def text(self) -> str:
        return self.tool if self.glob is None else f"{self.tool}({self.glob})"


def parse_rule(text: str) -> Rule:
    """``TOOL`` or ``TOOL(glob)``; raises :class:`RuleError`."""
    raw = str(text).strip()
    if not raw:
        raise RuleError("empty rule")
    if "(" in raw:
        tool, _, rest = raw.partition("(")
        if not rest.endswith(")"):
            raise RuleError(f"rule {raw!r}: expected TOOL(glob) with a closing parenthesis")
        glob = rest[:-1]
        if not glob.strip():
            raise RuleError(f"rule {raw!r}: the glob inside the parentheses is empty")
    else:
        tool, glob = raw, None
    tool = tool.strip()
    if not tool or not _NAME.match(tool):
        raise RuleError(f"rule {raw!r}: expected a tool name, e.g. shell(npm test*)")
    return Rule(tool, glob)


# -- shell commands ------------------------------------------------------------------
@dataclass
class ShellParts:
    parts: list[str]
    redirects: bool  # an output redirection somewhere
    sure: bool = True  # fully understood (an unsure command matches no allow rule)


def split_shell(command: str) -> ShellParts:
    """The simple commands of ``command`` (substitutions' commands as parts of their
    own), read by :mod:`.shell_parse`."""
    parsed = parse_shell(command)
    return ShellParts([c.text for c in parsed.commands if c.text],
                      any(c.writes for c in parsed.commands), parsed.sure)


def _shell_allows(glob: str, command: str) -> bool:
    """Every part matches, nothing writes, nothing unsure, no control character (a
    newline inside a part: fnmatch's ``*`` would match across it)."""
    split = split_shell(command)
    return (split.sure and not split.redirects and bool(split.parts)
            and all(not _CONTROL.search(p) and fnmatch.fnmatchcase(p, glob)
                    for p in split.parts))


def shell_deny_unsure(command: str) -> bool:
    """Whether ``command`` runs a shell script whose commands are not known here
    (``bash x.sh``, ``… | sh``): a shell deny rule then asks, never allows."""
    return any(name == UNKNOWN_SCRIPT for name, _ in deny_forms(command))


def _shell_denies(glob: str, command: str) -> bool:
    """The whole command, a part, or any reading of a part's command name (see
    :func:`.shell_names.deny_forms`) matches."""
    if fnmatch.fnmatchcase(command.strip(), glob):
        return True
    if any(fnmatch.fnmatchcase(p, glob) for p in split_shell(command).parts):
        return True
    first = glob.split(" ", 1)[0]
    for name, rest in deny_forms(command):
        text = first if name is None else name
        if fnmatch.fnmatchcase(f"{text} {rest}" if rest else text, glob):
            return True
    return False


# -- paths ---------------------------------------------------------------------------
def _glob_regex(glob: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def project_path(project: Path | None, raw: str) -> str | None:
    """``raw`` relative to the project, normalized (``None``: outside of it)."""
    text = raw.strip() or "."
    if project is not None:
        base = Path(project).resolve()
        try:
            full = (base / text).resolve()
            rel = full.relative_to(base)
        except (ValueError, OSError, RuntimeError):
            return None
        return rel.as_posix()
    norm = os.path.normpath(text)
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
        return None
    return Path(norm).as_posix()


def _path_matches(glob: str, rel: str) -> bool:
    pattern = glob.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    regex = _glob_regex(pattern)
    if regex.match(rel):
        return True
    return pattern.endswith("/**") and rel == pattern[:-3]  # src/** also names src itself


# -- matching ------------------------------------------------------------------------
def _tool_matches(rule: Rule, tool_name: str) -> bool:
    if rule.tool == "mcp" and rule.glob is not None:
        return tool_name.startswith("mcp__")
    return fnmatch.fnmatchcase(tool_name, rule.tool)


def matches(rule: Rule, tool_name: str, args: Any, *, effect: str = "allow",
            project: Path | None = None) -> bool:
    """Whether ``rule`` covers this call (``effect`` decides how strictly)."""
    if not _tool_matches(rule, tool_name):
        return False
    if rule.glob is None:
        return True
    args = args if isinstance(args, dict) else {}
    glob = rule.glob
    if rule.tool == "mcp":
        _, server, tool = (tool_name.split("__", 2) + ["", ""])[:3]
        return fnmatch.fnmatchcase(f"{server}/{tool}", glob)
    if tool_name == "shell":
        command = args.get("command")
        if not isinstance(command, str):
            return False
        return _shell_denies(glob, command) if effect == "deny" else _shell_allows(
            glob, command)
    if tool_name in FILE_TOOLS:
        raw = args.get("path", ".")
        if not isinstance(raw, str):
            return False
        rel = project_path(project, raw)
        if effect == "deny":
            lexical = os.path.normpath(raw.strip() or ".")
            return any(_path_matches(glob, p) for p in (rel, lexical, raw.strip()) if p)
        return rel is not None and _path_matches(glob, rel)
    shown = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return fnmatch.fnmatchcase(shown, glob)


@dataclass(frozen=True)
class RuleSet:
    """Allow and deny rules (config and project ones together)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def verdict(self, tool_name: str, args: Any,
                project: Path | None = None) -> tuple[str, str] | None:
        """``("deny", rule)`` or ``("allow", rule)``, or ``None`` when no rule
        covers the call. Deny beats allow; unparsable rules are skipped. A shell
        command that runs a script not known here, while a shell deny rule exists,
        is ``("ask", rule)``: it is asked even where nothing else asks."""
        unsure: str | None = None
        for effect, texts in (("deny", self.deny), ("allow", self.allow)):
            if effect == "allow" and unsure is not None:
                return "ask", unsure
            for text in texts:
                try:
                    rule = parse_rule(text)
                except RuleError:
                    continue
                if matches(rule, tool_name, args, effect=effect, project=project):
                    return effect, text
                if (effect == "deny" and unsure is None and tool_name == "shell"
                        and rule.tool == "shell" and rule.glob is not None
                        and isinstance(args, dict) and shell_deny_unsure(
                            str(args.get("command", "")))):
                    unsure = text
        return None


_GIT_COMMANDS = frozenset({
    "status", "log", "diff", "show", "add", "commit", "branch", "checkout", "switch",
    "restore", "fetch", "pull", "push", "merge", "rebase", "reset", "stash", "tag",
    "remote", "blame", "grep", "ls-files", "rev-parse", "describe", "shortlog", "mv", "rm",
    "init", "clone", "cherry-pick", "revert", "bisect", "worktree", "submodule"})


_PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "deno"})


def _exact(text: str) -> str:
    """A rule for exactly ``text`` (its glob characters taken literally)."""
    return "shell(" + re.sub(r"([*?\[])", r"[\1]", text.strip()) + ")"


def _propose_shell(command: str) -> str:
    """A shell command's first word(s) with a ``*``; an interpreter or a command
    runner (``bash``, ``python3``, ``xargs``, ``sudo``, ``find``, ``git -c`` …), or
    a command not fully understood, gets a rule for exactly this command instead: a
    glob after them would allow any program."""
    parsed = parse_shell(command)
    cmds = [c for c in parsed.commands if c.words]
    if not parsed.sure or not cmds:
        return _exact(command)
    cmd = min(cmds, key=lambda c: c.start)  # the first written, not a substitution's
    values = [w.value for w in cmd.words]
    name, sub = values[0], (values[1:2] or [""])[0]
    if (name is None or "=" in name or is_interpreter(name)
            or (name == "git" and sub not in _GIT_COMMANDS)
            or (name in _PACKAGE_RUNNERS and sub in ("exec", "x", "dlx"))):
        return _exact(cmd.text)
    keep = []
    for word in cmd.words[:2]:
        if word.raw != word.value or not re.match(r"^[A-Za-z0-9_./:@+=-]+$", word.raw) \
                or word.raw.startswith("-"):
            break
        keep.append(word.raw)
    return f"shell({' '.join(keep)}*)" if keep else _exact(cmd.text)


def propose_rule(tool_name: str, args: Any) -> str:
    """The "always allow in this project" rule for a call: for a shell command, see
    :func:`_propose_shell`; a file's directory; other tools by name."""
    args = args if isinstance(args, dict) else {}
    if tool_name == "shell":
        return _propose_shell(str(args.get("command", "")))
    if tool_name in FILE_TOOLS:
        raw = args.get("path", ".")
        norm = project_path(None, raw) if isinstance(raw, str) else None
        if norm is None:
            return tool_name
        folder = norm if tool_name == "list_dir" else os.path.dirname(norm)
        return f"{tool_name}({folder}/**)" if folder and folder != "." else f"{tool_name}(**)"
    return tool_name
