"""``/permissions``: the session's grants (tools approved for the session), revocable."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from mttui.widgets.text import literal

from .dialogs import DIALOG_CSS


class PermissionsScreen(ModalScreen[str | None]):
    """Lists the grants; returns the tool to revoke, or ``None`` (closed)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PermissionsScreen") + """
    PermissionsScreen OptionList { height: auto; max-height: 12; }
    """
    BINDINGS = [
        Binding("r,delete", "revoke", "Revoke", id="permissions.revoke"),
        Binding("escape,q", "close", "Close", id="permissions.close"),
    ]

    def __init__(self, grants: list[str]) -> None:
        super().__init__()
        self.grants = list(grants)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Permissions of this session", classes="title")
            if self.grants:
                yield Static("Tools approved for the rest of the session (they run without "
                             "asking, also after a restart):")
                yield OptionList(*[Option(Text(literal(t), style="bold"), id=t)
                                   for t in self.grants], id="grants")
                yield Static("r revokes the selected tool (it asks again) · escape closes",
                             classes="hint")
            else:
                yield Static("No session grants: every tool call asks (or follows the "
                             "approval mode).")
                yield Static("escape closes", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        if self.grants:
            self.query_one(OptionList).focus()

    def action_revoke(self) -> None:
        if not self.grants:
            return
        index = self.query_one(OptionList).highlighted
        self.dismiss(self.grants[index or 0])

    def action_close(self) -> None:
        self.dismiss(None)
