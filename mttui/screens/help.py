"""The help screen: every binding, by screen, and the offline model's trigger syntax."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

Section = tuple[str, list[BindingType]]


def offline_help() -> str:
    """The offline model's trigger syntax (imported when the help opens, not at start)."""
    from mttui.graph.models import OFFLINE_HELP

    return OFFLINE_HELP


def slash_help() -> str:
    """The slash commands and what they do (``/help``)."""
    from mttui.core.slash import help_text

    return help_text()


def _bindings(items: Iterable[BindingType]) -> list[Binding]:
    out = []
    for item in items:
        if isinstance(item, Binding):
            out.append(item)
        else:
            key, action, *rest = item
            out.append(Binding(key, action, rest[0] if rest else ""))
    return out


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen > Vertical {
        width: 90%; max-width: 110; height: 90%; background: $panel;
        border: round $primary; border-title-style: bold; padding: 0 1;
    }
    HelpScreen VerticalScroll { height: 1fr; }
    """
    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    def __init__(self, sections: list[Section], *, offline: str = "",
                 keymap: dict[str, str] | None = None, commands: str = "") -> None:
        super().__init__()
        self.commands = commands  # the slash commands (mttui.core.slash)
        self.sections = sections
        self.offline = offline
        self.keymap = keymap or {}

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Keys and help"
            with VerticalScroll():
                yield Static(self._content(), id="help-body")
        yield Footer()

    def _keys(self, binding: Binding) -> str:
        keys = self.keymap.get(binding.id or "", binding.key) if binding.id else binding.key
        shown = []
        for key in keys.split(","):
            key = key.strip()
            display = binding.key_display if key == binding.key and binding.key_display else None
            shown.append(display or self.app.get_key_display(Binding(key, binding.action)))
        return " / ".join(dict.fromkeys(shown))

    def _content(self) -> RenderableType:
        parts: list[RenderableType] = []
        for title, items in self.sections:
            table = Table(box=None, show_header=False, padding=(0, 1), expand=False)
            table.add_column(style="bold cyan", no_wrap=True, width=16)
            table.add_column(width=28)
            table.add_column(style="dim", no_wrap=True)
            for binding in _bindings(items):
                if not binding.description:
                    continue
                table.add_row(self._keys(binding), binding.description, binding.id or "")
            parts += [Text(title, style="bold underline"), table, Text("")]
        parts.append(Text("The names on the right are binding ids: remap keys in config.toml, "
                          "e.g. [keys] stop = \"ctrl+c\" (quote ids with a dot).", style="dim"))
        parts.append(Text(""))
        parts.append(Text("Prompt", style="bold underline"))
        parts.append(Text("enter sends · ctrl+j (or shift+enter where the terminal reports it) "
                          "inserts a newline · ctrl+p opens the command palette"))
        parts.append(Text("/compact [instructions]  compress the history now (the "
                          "instructions say what the summary keeps) · /permissions  the "
                          "session's grants, revocable"))
        if self.offline:
            parts += [Text(""), Text("Offline model", style="bold underline"),
                      Text(self.offline)]
        if self.commands:
            parts += [Text(""), Text("Slash commands (type / in the prompt)",
                                     style="bold underline"), Text(self.commands)]
        return Group(*parts)

    def action_close(self) -> None:
        self.dismiss(None)
