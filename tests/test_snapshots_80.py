"""SVG snapshots at 80×24: the browser's footer keeps Help, the chat's header keeps the
project's last folder and the footer ``^o Sessions`` and ``f1 Help``. Update the
whole file with ``--snapshot-update`` and look at the SVGs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mttui.session.service import SessionService
from tests.support.clock import FrozenClock
from tests.support.snapshots import quiet
from tests.support.tui import make_app, msg, settle, write_session

SMALL = (80, 24)


def _sessions(service: SessionService, clock: FrozenClock) -> str:
    write_session(service, "重构会话存储：快速分页与全文搜索", [
        msg("user", "为什么会话列表要用键集分页？", 1),
        msg("assistant", "因为 **OFFSET** 越往后越慢；键集分页的代价与页码无关。", 2)])
    clock.jump(timedelta(hours=20))
    write_session(service, "Write the release notes", [
        msg("user", "Draft release notes for 0.1.", 1),
        msg("assistant", "## mttui 0.1\n\n- durable sessions\n- search", 2),
        ("pending_add", {"item_id": "p1", "mode": "queue", "text": "Mention the demo."})])
    clock.jump(timedelta(hours=3))
    sid = write_session(service, "Why is div() crashing in production on Mondays?", [
        msg("user", "Why is `div()` crashing in production?", 1),
        msg("assistant", "`div()` divides without checking `b`:\n\n```python\n"
                         "def div(a, b):\n    return a / b\n```\n\nGuard it.", 2),
        msg("user", "Do it, please.", 3)], provider="openai", model="gpt-4o-mini")
    clock.jump(timedelta(minutes=30))
    return sid


def test_browser_at_80x24(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    _sessions(service, frozen)
    assert snap_compare(make_app(service), terminal_size=SMALL, run_before=quiet)


def test_chat_at_80x24(snap_compare, service: SessionService, frozen: FrozenClock) -> None:
    sid = _sessions(service, frozen)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await quiet(pilot)

    app = make_app(service, open_session=sid)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
