"""``/mcp``: the dialog starts the configured servers in a worker and lists each
with its state, trust and tools (or its error)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from textual.app import App

from mttui.config import load_settings
from mttui.screens.mcp import McpScreen
from mttui.session.service import SessionService
from tests.support.mcp_hostile import HOSTILE
from tests.support.mcp_world import call_lines, stdio_server
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, make_app, screen_text, settle, wait_for


def _config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        stdio_server("calc") + stdio_server("broken", "--fail")
        + stdio_server("later", enabled=False))


async def test_mcp_dialog_lists_servers(tmp_path: Path, service: SessionService) -> None:
    _config(tmp_path)
    settings = load_settings({"provider": "offline"})

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(McpScreen(settings, service.project))

    app = Host()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, McpScreen)
        await wait_for(pilot, lambda: screen.states is not None)
        await pilot.pause()
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "mcp__calc__add" in text and "cannot start (scripted)" in text
        assert "disabled" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, McpScreen)
    assert call_lines(tmp_path / "calls.txt") == []


def test_mcp_screen(snap_compare, tmp_path: Path, service: SessionService) -> None:
    _config(tmp_path)
    settings = load_settings({"provider": "offline"})

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await quiet(pilot)  # the chat's prompt behind the dialog: no blinking cursor
        screen = McpScreen(settings, service.project)
        pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: screen.states is not None)
        await quiet(pilot)
        assert "calc" in screen_text(pilot.app)

    app = make_app(service, open_browser=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_the_dialog_shows_an_alias_with_the_real_name_escaped(
        tmp_path: Path, service: SessionService) -> None:
    (tmp_path / "config.toml").write_text(
        f'[mcp_servers.repo]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = [{json.dumps(str(HOSTILE))}]\n')
    settings = load_settings({"provider": "offline"})

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(McpScreen(settings, service.project))

    app = Host()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, McpScreen)
        await wait_for(pilot, lambda: screen.states is not None)
        await pilot.pause()
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        alias = screen.states[0].offered["repo.search"]  # type: ignore[index]
        assert f"{alias}  (real name: repo.search)" in text
        assert "(real name: esc\\x1b[31mred)" in text and "\x1b" not in text
        assert "(real name: line\\x0abreak)" in text
