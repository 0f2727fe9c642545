"""The rules that apply to one project: ``[permissions]`` of ``config.toml`` and the
project's saved rules, read again for every decision (a rule saved or revoked
elsewhere counts from the next call on)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mttui.session.rules import RulesFileError, load_rules, rules_path

from .rules import RuleSet


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
        """Config and project rules now (an unreadable project file adds none, so
        its calls ask as if it were empty)."""
        allow, deny = self.config_allow, self.config_deny
        if self.path is not None:
            try:
                saved = load_rules(self.path)
            except RulesFileError:
                saved = None
            if saved is not None:
                allow, deny = allow + saved.allow, deny + saved.deny
        return RuleSet(allow, deny)
