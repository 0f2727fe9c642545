"""Permission rules and session grants of one project: listed, saved, revoked.

The use case behind ``mttui permissions``, ``/permissions`` and the approval
dialog's "always allow in this project". Rules come from ``[permissions]`` in
``config.toml`` (written by hand, read-only here) and from the project's rule
file (``$MTTUI_HOME/rules/<project-hash>.toml``); grants are the tools a session
approved "for the rest of the session" (``approval_decision.remember``), until a
``grant_revoked`` record withdraws them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mttui.config import Settings
from mttui.graph.tools.rule_source import rule_problems
from mttui.graph.tools.rules import RuleError, RuleSet, parse_rule, propose_rule
from mttui.session.errors import MttuiError
from mttui.session.rules import add_rule, load_rules, read_rules, remove_rule, rules_path
from mttui.session.service import SessionService


@dataclass(frozen=True)
class RuleEntry:
    rule: str
    effect: str  # allow | deny
    source: str  # config | project

    def as_json(self) -> dict[str, str]:
        return {"rule": self.rule, "effect": self.effect, "source": self.source}


@dataclass(frozen=True)
class GrantEntry:
    tool: str
    session_id: str

    def as_json(self) -> dict[str, str]:
        return {"tool": self.tool, "session_id": self.session_id}


class RuleRefused(MttuiError):
    """A rule that cannot be saved or revoked (one line)."""


class Permissions:
    """The rules and grants of ``service``'s project."""

    def __init__(self, service: SessionService, settings: Settings) -> None:
        self.service = service
        self.settings = settings
        self.path = rules_path(service.layout.home, service.project)

    def rules(self) -> list[RuleEntry]:
        """Deny rules first (they win), config before project (of a broken project
        file, the deny rules read from it: see :meth:`problems`)."""
        saved = read_rules(self.path).rules
        out = [RuleEntry(r, "deny", "config") for r in self.settings.permissions_deny]
        out += [RuleEntry(r, "deny", "project") for r in saved.deny]
        out += [RuleEntry(r, "allow", "config") for r in self.settings.permissions_allow]
        out += [RuleEntry(r, "allow", "project") for r in saved.allow]
        return out

    def problems(self) -> list[str]:
        """One line for each problem of the project's rule file (none: it is fine)."""
        return rule_problems(self.path)

    def grants(self, session_id: str | None = None) -> list[GrantEntry]:
        """Session grants (of one session, or of every session of the project)."""
        if session_id is not None:
            session_id = self.service.get(session_id).id
        found = self.service.grants(session_id)
        return [GrantEntry(tool, sid) for sid, tools in found.items() for tool in sorted(tools)]

    def as_json(self) -> dict[str, list[dict[str, str]]]:
        return {"rules": [r.as_json() for r in self.rules()],
                "grants": [g.as_json() for g in self.grants()]}

    @staticmethod
    def propose(tool_name: str, arguments: object) -> str:
        """The "always allow in this project" rule the approval dialog offers."""
        return propose_rule(tool_name, arguments)

    def save(self, rule: str, effect: str = "allow") -> bool:
        """Save a project rule; ``False`` when it was saved already."""
        try:
            parsed = parse_rule(rule)
        except RuleError as exc:
            raise RuleRefused(str(exc)) from None
        return add_rule(self.path, self.service.project, parsed.text, effect)

    def revoke(self, rule: str) -> RuleEntry:
        """Remove a saved project rule (the one revoked). Config rules are the user's
        own file's: they are named, not removed."""
        text = rule.strip()
        saved = load_rules(self.path)
        effect = "deny" if text in saved.deny else "allow"
        if remove_rule(self.path, self.service.project, text):
            return RuleEntry(text, effect, "project")
        if text in self.settings.permissions_allow or text in self.settings.permissions_deny:
            raise RuleRefused(f"{text} is in [permissions] of config.toml; edit that file "
                                   "to remove it")
        raise RuleRefused(f"no saved rule {text} in this project "
                               "(see mttui permissions)")

    def revoke_grant(self, session_ref: str, tool: str) -> GrantEntry:
        """Withdraw the session grant of ``tool`` (a ``grant_revoked`` record; the
        session's write lock is taken for it)."""
        info = self.service.resolve(session_ref)
        if tool not in self.service.grants(info.id).get(info.id, []):
            raise RuleRefused(f"{tool} is not granted in session {info.id}")
        writer = self.service.open_session(Path(info.path))
        try:
            writer.append("grant_revoked", tools=[tool])
        finally:
            writer.close()
        return GrantEntry(tool, info.id)


def rule_covers(rule: str, tool_name: str, arguments: object,
                project: Path | None = None) -> bool:
    """Whether the allow ``rule`` lets this call run without asking."""
    return RuleSet(allow=(rule,)).verdict(tool_name, arguments, project) is not None
