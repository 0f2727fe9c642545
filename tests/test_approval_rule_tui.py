"""The approval panel's "always allow in this project": it shows the rule it proposes
before saving; confirming approves every call of the request the rule covers; the
chat saves the rule and the next matching command runs without asking."""

from __future__ import annotations

from typing import Any

from mttui.screens.approval import ApprovalDecision, ApprovalPanel
from mttui.screens.chat import ChatScreen
from mttui.session.rules import load_rules, rules_path
from mttui.session.service import SessionService
from tests.support.approval import Host, request
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, kinds, make_app, screen_text, send, settle, wait_for

NPM = [
    {"call_id": "c1", "tool_name": "shell", "arguments": {"command": "npm test -- -k x"},
     "risk_level": "high"},
    {"call_id": "c2", "tool_name": "shell", "arguments": {"command": "npm test && rm -rf x"},
     "risk_level": "high"},
    {"call_id": "c3", "tool_name": "shell", "arguments": {"command": "npm test -- -k y"},
     "risk_level": "high"},
]


def _text(app: Any) -> str:
    return "\n".join(s.text for s in app.screen._compositor.render_strips())


async def test_the_rule_is_shown_then_saved_with_the_calls_it_covers() -> None:
    app = Host(request(NPM))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        assert "shell(npm test*)" in _text(app) and app.result is None
        await pilot.press("enter")  # saves: c1 and c3 approved; c2 (compound) still open
        await pilot.pause()
        panel = app.query_one(ApprovalPanel)
        assert panel.current == 1 and app.result is None
        await pilot.press("2", "enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(
        "req_1", {"c1": "approve", "c3": "approve", "c2": "deny"}, None, [],
        ["shell(npm test*)"])


async def test_any_other_key_backs_out_of_the_rule() -> None:
    app = Host(request(NPM[:1]))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4", "x", "enter")
        await pilot.pause()
        assert app.result is None and app.query_one(ApprovalPanel).proposing is None
        await pilot.press("4", "escape")
        await pilot.pause()
        assert app.result is None
        await pilot.press("4", "4")
        await pilot.pause()
    assert app.result is not None and app.result.rules == ["shell(npm test*)"]


async def test_chat_saves_the_rule_and_the_next_call_runs_unasked(
        service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = pilot.app.screen
        assert isinstance(chat, ChatScreen)
        await send(pilot, "!echo rule-one")
        await wait_for(pilot, lambda: chat.approval is not None)
        await pilot.press("ctrl+a", "4")
        await pilot.pause()
        assert "shell(echo rule-one*)" in screen_text(app)
        await pilot.press("enter")
        path = rules_path(service.layout.home, service.project)
        await wait_for(pilot, lambda: load_rules(path).allow == ("shell(echo rule-one*)",))
        await wait_for(pilot, lambda: chat.state == "idle")
        sid = chat.chat.session_id
        await send(pilot, "!echo rule-one again")
        await wait_for(pilot, lambda: kinds(service, sid).count("tool_outcome") == 2)
        assert chat.approval is None
        await chat.shutdown()
    assert kinds(service, sid).count("approval_request") == 1


def test_approval_with_a_proposed_rule(snap_compare, service: SessionService) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        chat = pilot.app.screen
        await chat.mount(ApprovalPanel(request(NPM[:1])), before=chat.query_one("#prompt"))
        await pilot.pause()
        await pilot.press("ctrl+a", "4")
        await quiet(pilot)

    app = make_app(service, open_browser=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
