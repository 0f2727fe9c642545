"""SVG snapshots of every screen (pytest-textual-snapshot), stored under ``snapshots/``.

Deterministic: fixed terminal size, frozen clock (relative times from a fixed
"now"), fixed session ids and record timestamps, no cursor blink, no animations,
notifications cleared. Update with ``pytest tests/test_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mttui.graph.events import ApprovalRequested
from mttui.screens.approval import ApprovalPanel
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.clock import FrozenClock
from tests.support.snapshots import quiet
from tests.support.tui import SIZE, make_app, msg, settle, write_session


def sample_project(service: SessionService, clock: FrozenClock) -> dict[str, str]:
    """Sessions with every badge, spread over three days."""
    ids: dict[str, str] = {}
    ids["cjk"] = write_session(service, "重构会话存储：快速分页与全文搜索", [
        msg("user", "为什么会话列表要用键集分页？", 1),
        msg("assistant", "因为 **OFFSET** 越往后越慢；键集分页的代价与页码无关。", 2)])
    clock.jump(timedelta(hours=20))
    ids["plain"] = write_session(service, "Fix the flaky parser test", [
        msg("user", "The parser test fails one run in ten. Why?", 1),
        msg("assistant", "It depends on dict order in `tokens()`; sort the keys.", 2)],
        provider="openai", model="gpt-4o-mini")
    clock.jump(timedelta(hours=18))
    ids["corrupt"] = write_session(service, "Notes with a damaged line", [
        msg("user", "Remember: the log is the source of truth.", 1),
        msg("assistant", "Noted. A damaged line is skipped and counted.", 2)])
    with open(service.get(ids["corrupt"]).path, "ab") as fh:
        fh.write(b'{"type":"transcript_message","seq":9,"mess\n')
    clock.jump(timedelta(hours=20))
    ids["queued"] = write_session(service, "Write the release notes", [
        msg("user", "Draft release notes for 0.1.", 1),
        msg("assistant", "## mttui 0.1\n\n- durable sessions\n- search", 2),
        ("pending_add", {"item_id": "p1", "mode": "queue", "text": "Mention the demo."}),
        ("pending_add", {"item_id": "p2", "mode": "queue", "text": "Shorter, please."})])
    clock.jump(timedelta(hours=9))
    args = {"command": "alembic upgrade head"}
    ids["interrupted"] = write_session(service, "Run the migrations", [
        ("run_start", {"run_id": "run-1"}),
        msg("user", "!alembic upgrade head", 1),
        msg("assistant", "", 2, tool_calls=[{"id": "call_1", "name": "shell", "args": args}]),
        ("tool_dispatch", {"run_id": "run-1", "call_id": "call_1", "tool_name": "shell",
                           "arguments_sha256": "0" * 64})])
    clock.jump(timedelta(minutes=50))
    ids["approval"] = write_session(service, "Deploy to staging", [
        ("run_start", {"run_id": "run-2"}),
        msg("user", "!./deploy.sh staging", 1),
        msg("assistant", "", 2, tool_calls=[
            {"id": "call_2", "name": "shell", "args": {"command": "./deploy.sh staging"}}]),
        ("approval_request", {"request_id": "req-1", "run_id": "run-2", "tool_calls": [
            {"call_id": "call_2", "tool_name": "shell",
             "arguments": {"command": "./deploy.sh staging"}, "risk_level": "high"}]})],
        provider="openai", model="qwen2.5-coder-32b")
    clock.jump(timedelta(minutes=40))
    return ids


def chat_session(service: SessionService) -> str:
    records = [
        msg("user", "Why is `div()` crashing in production?", 1),
        msg("assistant", "Let me look at the code and the tests.", 2, tool_calls=[
            {"id": "c1", "name": "read_file", "args": {"path": "src/calc.py"}},
            {"id": "c2", "name": "shell", "args": {"command": "pytest -q tests/test_calc.py"}}]),
        msg("tool", "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b",
            3, tool_call_id="c1", name="read_file"),
        msg("tool", "F.\nFAILED tests/test_calc.py::test_div_by_zero - ZeroDivisionError",
            4, tool_call_id="c2", name="shell", status="error"),
        ("compression", {"summary": "## Current goal\nMake `div()` safe.", "removed_count": 42,
                         "kept_count": 4, "kept_message_ids": ["msg-1", "msg-2", "msg-3",
                                                               "msg-4"],
                         "trigger": "auto", "tokens_before": 31_200, "tokens_after": 9_100}),
        msg("assistant", "`div()` divides without checking `b`:\n\n```python\ndef div(a, b):\n"
                         "    return a / b\n```\n\nGuard it and keep the error explicit:\n\n"
                         "1. raise `ValueError` for `b == 0`\n2. add a test for it", 5),
        msg("user", "Do it, and show me [bold]the diff[/bold] please.", 6),
    ]
    return write_session(service, "Why is div() crashing?", records,
                         provider="openai", model="gpt-4o-mini")


def test_browser(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    """The session browser: badges, relative times, the preview of the newest session."""
    sample_project(service, frozen)
    assert snap_compare(make_app(service), terminal_size=SIZE, run_before=quiet)


def test_chat_with_tool_blocks_and_compression(snap_compare, service: SessionService,
                                               frozen: FrozenClock) -> None:
    """A chat: tool blocks (one expanded, one failed), a compression, Markdown."""
    sid = chat_session(service)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        view = pilot.app.screen.query_one(HistoryView)
        view.select(next(it for it in view.items if it.tool == "read_file"))
        view.action_expand()
        view.selected = None
        view.scroll_to(y=view.max_scroll_y, animate=False, immediate=True, force=True)
        await quiet(pilot)

    app = make_app(service, open_session=sid)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_approval_modal(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    """Two calls asked again after a resume: a shell command and a diff preview."""
    sid = chat_session(service)
    request = ApprovalRequested("req-1", "run-1", [
        {"call_id": "c1", "tool_name": "shell", "risk_level": "high",
         "arguments": {"command": "rm -rf build/ && make release"}},
        {"call_id": "c2", "tool_name": "edit_file", "risk_level": "medium",
         "arguments": {"path": "src/calc.py", "old": "return a / b",
                       "new": "return a / b if b else 0.0"}},
    ], asked_again=True)
    diff = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -4,2 +4,2 @@\n def div(a, b):\n"
            "-    return a / b\n+    return a / b if b else 0.0\n")

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        chat = pilot.app.screen
        await chat.mount(ApprovalPanel(request, {"c2": diff}), before=chat.query_one("#prompt"))
        await pilot.pause()
        await pilot.press("ctrl+a", "1")  # the first call is approved, the diff is shown
        await quiet(pilot)

    app = make_app(service, open_session=sid)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_search_panel(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    """Search as you type over the project: titles, roles, times, highlighted matches."""
    sample_project(service, frozen)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("slash", *"the")
        await pilot.pause(0.35)
        await quiet(pilot)

    assert snap_compare(make_app(service), terminal_size=SIZE, run_before=run_before)


def test_resume_warnings_inline(snap_compare, service: SessionService,
                                frozen: FrozenClock) -> None:
    """Opening a session whose tool was running when the process died: the warnings
    above the prompt (applied, and shown inline, when the user acts)."""
    ids = sample_project(service, frozen)

    async def run_before(pilot: Any) -> None:
        await settle(pilot, 8)
        await quiet(pilot)

    app = make_app(service, open_session=ids["interrupted"])
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    """Every binding by screen (the top of the help)."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await quiet(pilot)

    assert snap_compare(make_app(service), terminal_size=SIZE, run_before=run_before)
