"""The rules that apply to one project: ``[permissions]`` of ``config.toml`` and the
project's saved rules, read again for every decision (a rule saved or revoked
elsewhere counts from the next call on).

A saved-rules file that is broken fails closed: its allow rules are ignored, its
deny rules kept where they parse, and :func:`rule_problems` says so in one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mttui.session.rules import read_rules, rule_line, rules_path

from .rules import RuleError, RuleSet, parse_rule


@dataclass(frozen=True)
class RuleSource:
    config_allow: tuple[str, ...]
    config_deny: tuple[str, ...]
    path: Path | None  # the project's rule file (None: config rules only)

    @classmethod
    def for_project(cls, allow: tuple[str, ...], deny: tuple[str, ...],
                    home: Path | None, project: Path) -> RuleSource:
        return cls(allow, deny, rules_path(home, project) if home is not None else None)

    def current(self) -> RuleSet:
        """Config and project rules now (of a broken project file, its deny rules)."""
        allow, deny = self.config_allow, self.config_deny
        if self.path is not None:
            saved = read_rules(self.path).rules
            allow, deny = allow + saved.allow, deny + saved.deny
        return RuleSet(allow, deny)


def rule_problems(path: Path) -> list[str]:
    """What is wrong with the saved-rules file at ``path``, one line each: a file
    that does not parse, and rules that are not ``TOOL`` or ``TOOL(glob)`` (ignored,
    so a deny rule among them denies nothing)."""
    read = read_rules(path)
    problems = [read.problem] if read.problem else []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return problems
    for effect, rules in (("deny", read.rules.deny), ("allow", read.rules.allow)):
        for rule in rules:
            try:
                parse_rule(rule)
            except RuleError as exc:
                problems.append(f"{path}:{rule_line(text, rule)}: {exc}; this {effect} "
                                "rule is ignored")
    return problems
