"""The per-project rule file: ``$MTTUI_HOME/rules/<project-hash>.toml``.

Written by "always allow in this project", listed and revoked by ``/permissions``
and ``mttui permissions``. Only the file lives here; what a rule means is
``mttui.graph.tools.rules``. The file is replaced atomically (temp file, fsync,
rename), so a crash leaves the old or the new list, never half of one::

    project = "/home/me/code/app"
    allow = ["shell(npm test*)", "edit_file(src/**)"]
    deny = []
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import MttuiError
from .paths import ensure_dir, project_hash, secure_file

EFFECTS = ("allow", "deny")


class RulesFileError(MttuiError):
    """The rule file cannot be read or written (one line)."""


def rules_path(home: Path, project: Path) -> Path:
    """Where the saved rules of ``project`` live under the data ``home``."""
    return Path(home) / "rules" / f"{project_hash(project)}.toml"


@dataclass(frozen=True)
class ProjectRules:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def load_rules(path: Path) -> ProjectRules:
    """The saved rules (none when the file does not exist)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return ProjectRules()
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RulesFileError(f"cannot read {path}: {exc}") from None
    lists = []
    for effect in EFFECTS:
        value = data.get(effect, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RulesFileError(f"{path}: {effect} must be a list of strings")
        lists.append(tuple(value))
    return ProjectRules(*lists)


@dataclass(frozen=True)
class RulesRead:
    """The rules read from a file that may be broken: ``problem`` says (one line,
    naming the file, the line and its text) what was wrong and what is ignored."""

    rules: ProjectRules
    problem: str | None = None


_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')


def read_rules(path: Path) -> RulesRead:
    """The saved rules, failing closed: in a file that does not parse (or whose lists
    are not lists of strings) the allow rules are ignored and the deny rules kept,
    read line by line where the file as a whole does not parse."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        return RulesRead(ProjectRules())
    except (OSError, UnicodeError) as exc:
        return RulesRead(ProjectRules(), f"{path}: cannot read it ({exc}): its rules "
                                         "are ignored")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else 0
        why = str(exc).split(" (at ")[0]
        return RulesRead(ProjectRules((), _deny_lines(text)),
                         _problem(path, text, line, why))
    lists: dict[str, tuple[str, ...]] = {}
    for effect in EFFECTS:
        value = data.get(effect, [])
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            lists[effect] = tuple(value)
            continue
        line = next((n for n, ln in enumerate(text.splitlines(), 1)
                     if (m := _KEY.match(ln)) and m.group(1) == effect), 0)
        deny = lists.get("deny", ()) if effect == "allow" else ()
        if effect == "allow":
            value = data.get("deny", [])
            if isinstance(value, list):
                deny = tuple(v for v in value if isinstance(v, str))
        return RulesRead(ProjectRules((), deny), _problem(
            path, text, line, f"{effect} must be a list of strings"))
    return RulesRead(ProjectRules(lists["allow"], lists["deny"]))


def rule_line(text: str, rule: str) -> int:
    """The number of the first line of ``text`` that holds ``rule`` (0: none)."""
    return next((n for n, ln in enumerate(text.splitlines(), 1) if rule in ln), 0)


def _problem(path: Path, text: str, line: int, why: str) -> str:
    lines = text.splitlines()
    shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return (f"{path}:{line}: {why}: {shown!r}; its allow rules are ignored, its deny "
            "rules kept")


def _deny_lines(text: str) -> tuple[str, ...]:
    """The strings of the ``deny = [...]`` lines of a file that does not parse, each
    kept where it parses as a TOML string on its own."""
    key, out = "", []
    for line in text.splitlines():
        found = _KEY.match(line)
        if found:
            key = found.group(1)
        if key != "deny":
            continue
        for literal in _STRING.findall(line[found.end():] if found else line):
            try:
                value = tomllib.loads(f"v = {literal}")["v"]
            except tomllib.TOMLDecodeError:
                continue
            if isinstance(value, str) and value not in out:
                out.append(value)
    return tuple(out)


def _write(path: Path, project: Path, rules: ProjectRules) -> None:
    ensure_dir(path.parent)
    lines = [
        '# Saved by "always allow in this project"; `mttui permissions revoke RULE` removes one.',
        f"project = {json.dumps(str(Path(project).resolve()), ensure_ascii=False)}",
    ]
    for effect, values in (("allow", rules.allow), ("deny", rules.deny)):
        items = "".join(f"\n  {json.dumps(v, ensure_ascii=False)}," for v in values)
        lines.append(f"{effect} = [{items}\n]" if values else f"{effect} = []")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".rules-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise RulesFileError(f"cannot write {path}: {exc}") from None
    secure_file(path)


def add_rule(path: Path, project: Path, rule: str, effect: str = "allow") -> bool:
    """Save ``rule``; ``False`` when it was saved already."""
    if effect not in EFFECTS:
        raise ValueError(f"effect must be one of {EFFECTS}")
    current = load_rules(path)
    have = current.allow if effect == "allow" else current.deny
    if rule in have:
        return False
    if effect == "allow":
        _write(path, project, ProjectRules((*current.allow, rule), current.deny))
    else:
        _write(path, project, ProjectRules(current.allow, (*current.deny, rule)))
    return True


def remove_rule(path: Path, project: Path, rule: str) -> bool:
    """Remove ``rule`` (allow or deny); ``False`` when it is not saved."""
    current = load_rules(path)
    if rule not in current.allow and rule not in current.deny:
        return False
    _write(path, project, ProjectRules(tuple(r for r in current.allow if r != rule),
                                       tuple(r for r in current.deny if r != rule)))
    return True
