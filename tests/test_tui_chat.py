"""The chat history: keyset paging in both directions with a bounded window, literal
display of markup and escapes, tool blocks, compressions, resume warnings, search."""

from __future__ import annotations

from mttui.screens.chat import ChatScreen
from mttui.screens.search import SearchScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from tests.support.tui import (
    SIZE,
    chat_records,
    make_app,
    msg,
    screen_text,
    send,
    settle,
    write_session,
)


def message_seqs(view: HistoryView) -> list[int]:
    seqs = set()
    for item in view.items:
        if item.kind in ("user", "assistant", "tool", "system"):
            seqs.add(item.seq)
            if item.result_seq:
                seqs.add(item.result_seq)
    return sorted(seqs)




async def test_scrolling_up_pages_older_messages_and_keeps_the_window_bounded(
        service: SessionService, frozen) -> None:
    sid = write_session(service, "Long", chat_records(2000))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        assert message_seqs(view) == list(range(1951, 2001))
        await pilot.press("pageup", "pageup", "pageup")  # the keys page too
        await settle(pilot, 2)
        assert message_seqs(view)[0] < 1951
        for _ in range(10):  # then a fast scroll to the top of each window
            view.scroll_to(y=0, animate=False, immediate=True)
            await settle(pilot, 2)
        seqs = message_seqs(view)
        assert seqs == list(range(seqs[0], seqs[-1] + 1))  # no gap, no duplicate
        assert seqs[0] < 1700
        assert len(view.items) <= view.MAX_ITEMS and view.has_newer
        view.focus()
        await pilot.press("end")
        await settle(pilot)
        assert message_seqs(view)[-1] == 2000 and not view.has_newer
        assert view.at_bottom


async def test_home_jumps_to_the_start_and_scrolling_down_pages_newer(
        service: SessionService, frozen) -> None:
    sid = write_session(service, "Long", chat_records(400))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        view.focus()
        await pilot.press("home")
        await settle(pilot)
        assert message_seqs(view)[0] == 1 and not view.has_more and view.has_newer
        assert "start of the session" in screen_text(app)
        for _ in range(4):
            await pilot.press("pagedown", "pagedown", "pagedown", "pagedown")
            view.scroll_to(y=view.max_scroll_y, animate=False, immediate=True)
            await settle(pilot, 2)
        seqs = message_seqs(view)
        assert seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[-1] > 100


async def test_markup_and_ansi_are_shown_literally(service: SessionService, frozen) -> None:
    nasty = "[bold red]boom[/] \x1b[31mred\x1b[0m [link=https://example.com]x[/link] :smile:"
    sid = write_session(service, "[b]title[/b]", [
        msg("user", nasty, 1),
        msg("assistant", "", 2, tool_calls=[{"id": "c1", "name": "shell",
                                             "args": {"command": "printf '\\x1b[2J'"}}]),
        msg("tool", nasty, 3, tool_call_id="c1", name="shell"),
        msg("assistant", nasty, 4),
    ])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        view.focus()
        view.select(next(it for it in view.items if it.kind == "tool"))
        await pilot.press("enter")  # expand: the tool output is shown too
        await settle(pilot)
        text = screen_text(app)
        shown = "[bold red]boom[/] ␛[31mred␛[0m [link=https://example.com]x[/link] :smile:"
        assert text.count(shown) == 3  # user, tool output, assistant
        assert "[b]title[/b]" in text
        for strip in app.screen._compositor.render_strips():
            for segment in strip:
                assert "\x1b" not in segment.text
                if "boom" in segment.text:
                    assert segment.style is None or not segment.style.link


async def test_tool_blocks_expand_and_collapse(service: SessionService, frozen) -> None:
    sid = write_session(service, "Tools", chat_records(8))
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        tool = next(it for it in view.items if it.kind == "tool" and it.seq == 6)
        assert tool.output == "step 6" and tool.status == "success"
        assert "▸ shell  echo step 6" in screen_text(app)
        view.focus()
        view.select(tool)
        await pilot.press("enter")
        text = screen_text(app)
        assert "▾ shell" in text and "arguments" in text and "output" in text
        assert tool.expanded
        await pilot.press("enter")
        assert not tool.expanded


async def test_compression_item_and_its_summary(service: SessionService, frozen) -> None:
    records = chat_records(40)
    records.insert(30, ("compression", {
        "summary": "## Goal\nFinish the parser.", "removed_count": 42, "kept_count": 8,
        "kept_message_ids": [], "trigger": "auto", "tokens_before": 31_000,
        "tokens_after": 9_000}))
    sid = write_session(service, "Compressed", records)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(HistoryView)
        item = next(it for it in view.items if it.kind == "compression")
        assert item.seq == 30  # after the 30th message, where it happened
        view.focus()
        view.select(item)
        await pilot.pause()
        assert "compressed 42 messages — 31k → 9.0k tokens" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert "Finish the parser." in screen_text(app)


async def test_resume_warnings_are_shown_inline(service: SessionService, frozen) -> None:
    sid = write_session(service, "Interrupted", [
        ("run_start", {"run_id": "run-1"}),
        msg("user", "!make test", 1),
        msg("assistant", "", 2, tool_calls=[{"id": "call_1", "name": "shell",
                                             "args": {"command": "make test"}}]),
        ("tool_dispatch", {"run_id": "run-1", "call_id": "call_1", "tool_name": "shell",
                           "arguments_sha256": "0" * 64}),
    ])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, 6)
        # said when the session opens, applied (and shown inline) when the user acts
        assert "execution_not_restored" in screen_text(app)
        await send(pilot, "go on")
        await settle(pilot, 6)
        view = app.screen.query_one(HistoryView)
        warnings = [it for it in view.items if it.kind == "warnings"]
        assert len(warnings) == 1
        codes = [w["code"] for w in warnings[0].data["warnings"]]
        assert "execution_not_restored" in codes
        text = screen_text(app)
        assert "⚠ Resumed (transcript)" in text and "execution_not_restored" in text
    # the resume was recorded, and leaving the app ended the session cleanly
    kinds = [r["type"] for r in service.records(sid)[0]]
    assert "session_resumed" in kinds and kinds[-1] == "session_end"


async def test_search_in_session_jumps_to_the_hit(service: SessionService, frozen) -> None:
    records = chat_records(600)
    records[99] = msg("user", "the zanzibar incident", 100)
    sid = write_session(service, "Search me", records)
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen) and app.screen.scope == "session"
        await pilot.press(*"zanzibar")
        await pilot.pause(0.3)
        await settle(pilot)
        assert [h.seq for h in app.screen.hits] == [100]
        assert "zanzibar" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        view = app.screen.query_one(HistoryView)
        assert view.highlight_seq == 100 and view.selected is not None
        assert view.selected.seq == 100
        assert "the zanzibar incident" in screen_text(app)
        assert view.has_more and view.has_newer


async def test_search_from_the_browser_opens_the_session_at_the_hit(
        service: SessionService, frozen) -> None:
    write_session(service, "Other", [msg("user", "nothing here", 1)])
    records = chat_records(300)
    records[149] = msg("assistant", "We found the quokka bug.", 150)
    sid = write_session(service, "Target", records)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen) and app.screen.scope == "project"
        await pilot.press(*"quokka")
        await pilot.pause(0.3)
        await settle(pilot)
        hit = app.screen.hits[0]
        assert hit.session_id == sid and hit.seq == 150
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen) and app.screen.chat.session_id == sid
        assert app.screen.query_one(HistoryView).highlight_seq == 150
        assert "We found the quokka bug." in screen_text(app)
