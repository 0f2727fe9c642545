"""``/mcp`` is one of the slash commands: in ``exec`` it prints the servers' states,
in the chat it opens the MCP dialog; ``/help`` lists it."""

from __future__ import annotations

from pathlib import Path

from mttui.screens.mcp import McpScreen
from mttui.session.service import SessionService
from tests.support.mcp_world import stdio_server
from tests.support.resume import cli
from tests.support.tui import SIZE, make_app, settle, type_and, wait_for


def test_exec_prints_the_servers(home: Path, project: Path, tmp_path: Path) -> None:
    config = tmp_path / "cfg.toml"
    config.write_text(stdio_server("calc") + stdio_server("broken", "--fail"))
    env = {"MTTUI_CONFIG": str(config)}
    r = cli(home, project, "exec", "--provider", "offline", "/mcp", **env)
    assert r.returncode == 0, r.stderr
    assert "calc: ok" in r.stdout and "add" in r.stdout
    assert "broken: error" in r.stdout
    r = cli(home, project, "exec", "--provider", "offline", "/help", **env)
    assert "/mcp" in r.stdout


async def test_the_chat_opens_the_dialog(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_and(pilot, "/mcp", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, McpScreen))
