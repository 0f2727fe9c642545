"""A session whose log has no usage opens with an estimate of its model view (``~``),
the one compression uses: the last compression's ``tokens_after`` plus what follows."""

from __future__ import annotations

from mttui.core.view_tokens import estimated_view, row_tokens
from mttui.screens.chat import ChatScreen
from mttui.session.models import MessageRow
from mttui.session.service import SessionService
from mttui.widgets.status import StatusBar
from mttui.widgets.text import tokens
from tests.support.tui import SIZE, chat_records, make_app, msg, settle, write_session


def test_row_estimate_is_the_compression_estimate() -> None:
    from langchain_core.messages import AIMessage

    from mttui.graph.tokens import message_tokens

    calls = [{"id": "c1", "name": "shell", "args": {"command": "ls -la"}}]
    row = MessageRow(1, "m", "assistant", "Let me look.", "sent", "", tool_calls=calls)
    ai = AIMessage(content="Let me look.", tool_calls=calls)
    assert row_tokens(row) == message_tokens(ai)


async def test_a_session_without_usage_opens_with_an_estimate(service: SessionService,
                                                               frozen) -> None:
    body = "x" * 4000  # 1 000 tokens
    sid = write_session(service, "No usage", [
        msg("user", body, 1), msg("assistant", body, 2), msg("user", body, 3)])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        bar = app.screen.query_one(StatusBar)
        assert bar.used == 3 * (1000 + 4) and bar.estimated
        assert "tokens ~3.0k / 128k" in str(bar.render())


async def test_the_estimate_starts_at_the_last_compression(service: SessionService,
                                                            frozen) -> None:
    records = chat_records(40)
    records.insert(30, ("compression", {"summary": "s", "removed_count": 20, "kept_count": 10,
                                        "tokens_before": 9000, "tokens_after": 700,
                                        "trigger": "auto"}))
    sid = write_session(service, "Compressed", records)
    after = [r[1]["message"] for r in records[31:]]  # messages 31..40
    expected = 700 + sum(row_tokens(MessageRow(
        0, m["id"], m["role"], m["content"], "sent", "",
        tool_calls=m.get("tool_calls"))) for m in after)
    assert estimated_view(service, sid, service.markers(sid)) == expected
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.screen.query_one(StatusBar)
        assert bar.used == expected and bar.estimated
        assert f"tokens ~{tokens(expected)} / 128k" in str(bar.render())
