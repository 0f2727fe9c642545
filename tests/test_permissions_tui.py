"""``/permissions`` lists the project's rules (config and saved) with the session's
grants; ``r`` revokes a saved rule; a config rule is only shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mttui.screens.chat import ChatScreen
from mttui.screens.permissions import PermissionsScreen
from mttui.session.rules import add_rule, load_rules, rules_path
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, make_app, screen_text, settle, wait_for


@pytest.fixture
def with_rules(home: Path, tmp_path: Path, service: SessionService) -> Path:
    (tmp_path / "config.toml").write_text(
        '[permissions]\nallow = ["read_file"]\ndeny = ["shell(rm *)"]\n')
    path = rules_path(home, service.project)
    add_rule(path, service.project, "shell(npm test*)")
    add_rule(path, service.project, "edit_file(src/**)")
    return path


async def _open(pilot: Any) -> ChatScreen:
    await settle(pilot)
    chat = pilot.app.screen
    assert isinstance(chat, ChatScreen)
    chat.query_one(PromptArea).text = "/permissions"
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PermissionsScreen))
    await pilot.pause()
    return chat


async def test_rules_listed_and_a_saved_one_revoked(
        service: SessionService, with_rules: Path) -> None:
    from mttui.config import load_settings

    app = make_app(service, open_browser=False, settings=load_settings({"provider": "offline"}))
    async with app.run_test(size=SIZE) as pilot:
        chat = await _open(pilot)
        text = screen_text(app)
        for rule in ("shell(rm *)", "read_file", "shell(npm test*)", "edit_file(src/**)"):
            assert rule in text
        await pilot.press("r")  # the first row: a config rule, only shown
        await pilot.pause()
        assert isinstance(app.screen, PermissionsScreen)
        assert load_rules(with_rules).allow == ("shell(npm test*)", "edit_file(src/**)")
        await pilot.press("down", "down", "r")  # shell(npm test*)
        await wait_for(pilot, lambda: load_rules(with_rules).allow == ("edit_file(src/**)",))
        assert app.screen is chat


def test_permissions_screen(snap_compare, service: SessionService, with_rules: Path) -> None:
    from mttui.config import load_settings

    async def run_before(pilot: Any) -> None:
        await quiet(pilot)  # the chat's prompt behind the dialog: no blinking cursor
        await _open(pilot)
        await quiet(pilot)

    app = make_app(service, open_browser=False, settings=load_settings({"provider": "offline"}))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_a_broken_rule_file_is_named_when_listed(home: Path,
                                                       service: SessionService) -> None:
    from mttui.config import load_settings

    path = rules_path(home, service.project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('allow = ["shell"]\ndeny = [\n  "shell(rm *)", oops\n]\n')
    app = make_app(service, open_browser=False, settings=load_settings({"provider": "offline"}))
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        notes = [str(n.message) for n in app._notifications]
        assert any(f"{path}:3:" in n and "allow rules are ignored" in n for n in notes), notes
        text = screen_text(app)
        assert "shell(rm *)" in text and "allow  shell " not in text
