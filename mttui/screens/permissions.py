"""``/permissions``: the session's grants (tools approved for the session) and the
project's permission rules, each revocable (rules of ``config.toml`` are only shown:
that file is the user's own)."""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from mttui.core.permissions import RuleEntry
from mttui.widgets.text import literal

from .dialogs import DIALOG_CSS

RULE = "rule:"  # the prefix of a chosen rule (a bare name is a granted tool)


class PermissionsScreen(ModalScreen[str | None]):
    """Lists grants and rules; returns the tool to revoke, ``"rule:" + RULE`` for a
    project rule, or ``None`` (closed)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PermissionsScreen") + """
    PermissionsScreen OptionList { height: auto; max-height: 16; }
    """
    BINDINGS = [
        Binding("r,delete", "revoke", "Revoke", id="permissions.revoke"),
        Binding("escape,q", "close", "Close", id="permissions.close"),
    ]

    def __init__(self, grants: list[str], rules: list[RuleEntry] | None = None) -> None:
        super().__init__()
        self.grants = list(grants)
        self.rules = list(rules or [])
        self.choices: list[str | None] = []  # per option: what revoking it means

    def compose(self) -> ComposeResult:
        options: list[Option | None] = []
        for tool in self.grants:
            line = Text("grant  ", style="cyan")
            line.append(literal(tool), style="bold")
            line.append("  approved for this session", style="dim")
            options.append(Option(line))
            self.choices.append(tool)
        for rule in self.rules:
            line = Text(f"{rule.effect:<6} ", style="green" if rule.effect == "allow"
                        else "red")
            line.append(literal(rule.rule), style="bold")
            line.append(f"  {rule.source} rule" + ("" if rule.source == "project"
                                                   else " (edit config.toml)"), style="dim")
            options.append(Option(line))
            self.choices.append(RULE + rule.rule if rule.source == "project" else None)
        with Vertical():
            yield Label("Permissions", classes="title")
            if options:
                yield Static("Session grants run a tool without asking for the rest of the "
                             "session; rules apply to every session of this project "
                             "(deny wins).")
                yield OptionList(*[o for o in options if o is not None], id="grants")
                yield Static("r revokes the selected grant or project rule · escape closes",
                             classes="hint")
            else:
                yield Static("No session grants and no rules: every tool call asks (or "
                             "follows the approval mode).")
                yield Static("escape closes", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        if self.choices:
            self.query_one(OptionList).focus()

    def action_revoke(self) -> None:
        if not self.choices:
            return
        index = self.query_one(OptionList).highlighted or 0
        choice = self.choices[index]
        if choice is None:
            self.notify(escape("a rule of config.toml: remove it from [permissions] there"),
                        severity="warning")
            return
        self.dismiss(choice)

    def action_close(self) -> None:
        self.dismiss(None)
