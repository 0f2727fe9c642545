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
