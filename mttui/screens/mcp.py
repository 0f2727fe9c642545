"""``/mcp``: the MCP servers of ``config.toml``, their state and tools.

The servers are started in a worker to list their tools (none is called); the
dialog says so while it waits. Open it with :func:`open_mcp_screen`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from mttui.graph.mcp.names import shown
from mttui.widgets.text import literal

from .dialogs import DIALOG_CSS

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.mcp import ServerState

STATE_STYLE = {"ok": "green", "error": "bold red", "disabled": "dim"}


def server_lines(states: list[ServerState]) -> Text:
    """One block per server: name, state and trust, then its tools or its error."""
    out = Text()
    if not states:
        out.append("No MCP servers configured. Add one to config.toml:\n\n", style="dim")
        out.append('[mcp_servers.NAME]\ncommand = "python"\nargs = ["server.py"]\n'
                   'trust = "ask"   # or "read": never asks')
        return out
    for i, s in enumerate(states):
        if i:
            out.append("\n")
        out.append(literal(s.name), style="bold")
        out.append(f"  {s.state}", style=STATE_STYLE.get(s.state, ""))
        out.append(f"  trust {s.trust}\n", style="dim")
        if s.error:
            out.append(f"  {literal(s.error)}\n", style="red")
        elif s.tools:
            renamed = s.aliases()
            names = ", ".join(f"mcp__{s.name}__{t}" for t in s.tools if t not in renamed)
            if names:
                out.append(f"  {literal(names)}\n")
            for tool, alias in renamed.items():  # offered under a valid name: say which
                out.append(f"  {alias}", style="")
                out.append(f"  (real name: {literal(shown(tool))})\n", style="dim")
        elif s.state == "ok":
            out.append("  (no tools)\n", style="dim")
    return out


class McpScreen(ModalScreen[None]):
    """Shows the servers once the worker has started them."""

    DEFAULT_CSS = DIALOG_CSS.format(name="McpScreen") + """
    McpScreen > Vertical { width: 90; }
    McpScreen VerticalScroll { height: auto; max-height: 20; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close", id="mcp.close")]

    def __init__(self, settings: Settings, project: Path) -> None:
        super().__init__()
        self.settings = settings
        self.project = Path(project)
        self.states: list[ServerState] | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("MCP servers", classes="title")
            with VerticalScroll():
                yield Static("starting the servers to list their tools (none is called)…",
                             id="servers")
            yield Static("escape closes", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exit_on_error=False, name="mcp servers")
    def load(self) -> None:
        from mttui.core.mcp import mcp_status

        try:
            states = mcp_status(self.settings, self.project)
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._show, states)

    def _show(self, states: list[ServerState]) -> None:
        self.states = states
        self.query_one("#servers", Static).update(server_lines(states))

    def _failed(self, message: str) -> None:
        self.states = []
        self.query_one("#servers", Static).update(Text(literal(message), style="red"))

    def action_close(self) -> None:
        self.dismiss(None)


def open_mcp_screen(app: App[object], settings: Settings, project: Path) -> None:
    """What ``/mcp`` does: push the dialog (it loads the servers itself)."""
    app.push_screen(McpScreen(settings, project))
