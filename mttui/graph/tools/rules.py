"""Permission rules: ``TOOL`` or ``TOOL(glob)``, and whether one matches a call.

- ``shell(glob)``: the glob matches the command. A compound command (``;``, ``&&``,
  ``||``, ``|``, ``&``, ``$(…)``, backticks, ``<(…)``, newlines) matches an *allow*
  rule only if every part matches; an output redirection (``>``, ``>>``, ``>|``,
  ``&>``) never matches an allow rule. A *deny* rule matches when any part (or the
  whole command) matches.
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

FILE_TOOLS = ("read_file", "list_dir", "search_files", "write_file", "edit_file")
_NAME = re.compile(r"^[A-Za-z0-9_*?.\-]+$")
_SEPARATORS = ("&&", "||", "|&", ";", "|", "&", "\n")


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


def split_shell(command: str) -> ShellParts:
    """The simple commands of ``command``: split at the control operators, with the
    contents of command and process substitutions as parts of their own."""
    parts: list[str] = []
    redirects = False
    stack: list[list[str]] = [[]]  # the text of the part being read, per nesting level
    closers: list[str] = []  # what ends each open substitution
    quote = ""
    i, n = 0, len(command)

    def end_part() -> None:
        text = "".join(stack[-1]).strip()
        if text:
            parts.append(text)
        stack[-1] = []

    while i < n:
        c = command[i]
        if quote == "'":
            stack[-1].append(c)
            if c == "'":
                quote = ""
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            stack[-1].append(command[i:i + 2])
            i += 2
            continue
        opened = command[i:i + 2] if command[i:i + 2] in ("$(", "<(", ">(") else ""
        if opened or c == "`":
            if c == "`" and closers and closers[-1] == "`":
                end_part()  # the end of a backtick substitution
                stack.pop()
                closers.pop()
                stack[-1].append("`…`")
                i += 1
                continue
            stack.append([])
            closers.append("`" if c == "`" else ")")
            i += 1 if c == "`" else 2
            continue
        if c == ")" and closers and closers[-1] == ")" and not quote:
            end_part()
            stack.pop()
            closers.pop()
            stack[-1].append("$(…)")
            i += 1
            continue
        if quote == '"':
            stack[-1].append(c)
            if c == '"':
                quote = ""
            i += 1
            continue
        if c in ("'", '"'):
            quote = c
            stack[-1].append(c)
            i += 1
            continue
        if c == ">" or command.startswith("&>", i):
            step = 2 if c == "&" else 1
            rest = command[i + step:]
            dup = re.match(r"&(\d+|-)(?![\w./])", rest) if c == ">" else None
            if dup:  # 2>&1: a copied file descriptor, not a file
                stack[-1].append(">" + dup.group(0))
                i += 1 + len(dup.group(0))
                continue
            redirects = True
            stack[-1].append(command[i:i + step])
            i += step
            continue
        sep = next((s for s in _SEPARATORS if command.startswith(s, i)), "")
        if sep:
            end_part()
            i += len(sep)
            continue
        stack[-1].append(c)
        i += 1
    while len(stack) > 1:  # an unclosed substitution: its text is a part of its own
        end_part()
        stack.pop()
    end_part()
    return ShellParts(parts, redirects)


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
        split = split_shell(command)
        if effect == "deny":
            return fnmatch.fnmatchcase(command.strip(), glob) or any(
                fnmatch.fnmatchcase(p, glob) for p in split.parts)
        return (not split.redirects and bool(split.parts)
                and all(fnmatch.fnmatchcase(p, glob) for p in split.parts))
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
        covers the call. Deny beats allow; unparsable rules are skipped."""
        for effect, texts in (("deny", self.deny), ("allow", self.allow)):
            for text in texts:
                try:
                    rule = parse_rule(text)
                except RuleError:
                    continue
                if matches(rule, tool_name, args, effect=effect, project=project):
                    return effect, text
        return None


def propose_rule(tool_name: str, args: Any) -> str:
    """The "always allow in this project" rule for a call: a shell command's first
    word(s), a file's directory; other tools by name."""
    args = args if isinstance(args, dict) else {}
    if tool_name == "shell":
        parts = split_shell(str(args.get("command", ""))).parts
        words = parts[0].split() if parts else []
        keep = []
        for word in words[:2]:
            if not re.match(r"^[A-Za-z0-9_./:@+=-]+$", word) or word.startswith("-"):
                break
            keep.append(word)
        return f"shell({' '.join(keep)}*)" if keep else "shell"
    if tool_name in FILE_TOOLS:
        raw = args.get("path", ".")
        norm = project_path(None, raw) if isinstance(raw, str) else None
        if norm is None:
            return tool_name
        folder = norm if tool_name == "list_dir" else os.path.dirname(norm)
        return f"{tool_name}({folder}/**)" if folder and folder != "." else f"{tool_name}(**)"
    return tool_name
