"""Runs from the chat screen with the offline model: send, stream, approve, deny, stop,
approval asked again after resume, session end on quit."""

from __future__ import annotations

from mttui.graph import events as ev
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView
from mttui.widgets.live import LiveTranscript
from mttui.widgets.prompt import PromptArea
from tests.support.tui import (
    SIZE,
    HistoryHost,
    kinds,
    make_app,
    msg,
    screen_text,
    send,
    settings,
    settle,
    wait_for,
    write_session,
)


def tear(path) -> None:
    with open(path, "ab") as fh:
        fh.write(b'{"type":"transcript_message","seq":4')


async def test_send_creates_the_session_and_shows_the_answer(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await send(pilot, "hello there\nsecond line")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.chat.writer is not None)
        await settle(pilot)
        text = screen_text(app)
        assert "hello there" in text and "Offline answer" in text
        assert chat.query_one(PromptArea).text == ""
        sid = chat.chat.session_id
        assert sid is not None and service.get(sid).title == "hello there"
        assert "tokens" in text and "offline model" in text
    assert kinds(service, sid)[-1] == "session_end"


async def test_newline_key_does_not_send(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb" and app.screen.chat.writer is None


async def test_fast_typing_then_enter_sends_everything_in_order(
        service: SessionService) -> None:
    from textual import events

    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        chat.query_one(PromptArea).focus()
        await pilot.pause()
        for ch in "typed fast":  # a burst, as from a paste-like stream of keys
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("enter", "\r"))
        await wait_for(pilot, lambda: chat.chat.session_id is not None and chat.state == "idle")
        await settle(pilot)
        assert service.get(chat.chat.session_id).title == "typed fast"
        assert chat.query_one(PromptArea).text == ""


async def test_tool_call_approved_in_the_modal(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await send(pilot, "!echo approved-and-ran")
        await wait_for(pilot, lambda: chat.approval is not None)
        await pilot.pause()
        assert "echo approved-and-ran" in screen_text(app)
        await pilot.press("ctrl+a", "1")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.approval is None)
        await settle(pilot)
        view = chat.query_one(HistoryView)
        tool = view.find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "success"
        assert "approved-and-ran" in (tool.output or "")


async def test_tool_call_denied_with_a_reason(service: SessionService) -> None:
    app = make_app(service, open_browser=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await send(pilot, "!touch should-not-exist")
        await wait_for(pilot, lambda: chat.approval is not None)
        await pilot.press("ctrl+a", "2", *"too risky", "enter")
        await wait_for(pilot, lambda: chat.state == "idle" and chat.approval is None)
        await settle(pilot)
        tool = chat.query_one(HistoryView).find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "denied"
        sid = chat.chat.session_id
    decision = [r for r in service.records(sid)[0] if r["type"] == "approval_decision"][0]
    assert decision["reason"] == "too risky"
    assert not (service.project / "should-not-exist").exists()


async def test_escape_stops_a_streaming_answer(service: SessionService) -> None:
    app = make_app(service, open_browser=False, settings=settings(offline_delay=0.05))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        await send(pilot, "tell me everything " * 30)
        view = chat.query_one(HistoryView)
        await wait_for(pilot, lambda: view.find(lambda it: it.streaming) is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: chat.state == "idle")
        await settle(pilot)
        assert "stopped" in screen_text(app)
        sid = chat.chat.session_id
    ends = [r for r in service.records(sid)[0] if r["type"] == "run_end"]
    assert ends[-1]["status"] == "stopped"


async def test_pending_approval_is_asked_again_after_resume(service: SessionService) -> None:
    from mttui.graph.runner import Runner

    writer = service.create_session(provider="offline", model="offline", title="Waiting")
    runner = Runner.for_service(service, writer, settings())
    events = list(runner.run("!echo resumed-run"))
    assert isinstance(events[-1], ev.RunEnded) and events[-1].status == "awaiting_approval"
    runner.close()
    writer.close()
    app = make_app(service, open_session=writer.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen)
                       and app.screen.approval is not None)
        await pilot.pause()
        panel = app.screen.approval
        assert panel.request.asked_again
        assert "asked again after resume" in screen_text(app).lower()
        await pilot.press("ctrl+a", "1")
        chat = app.screen_stack[-1]
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen)
                       and app.screen.state == "idle")
        await settle(pilot)
        tool = app.screen.query_one(HistoryView).find(lambda it: it.kind == "tool")
        assert tool is not None and tool.status == "success" and chat is app.screen


async def test_streamed_text_grows_one_item_then_becomes_the_message() -> None:
    app = HistoryHost()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HistoryView)
        view.load_newest()
        await settle(pilot)
        live = LiveTranscript(view)
        live.apply(ev.MessageAdded({"id": "u1", "role": "user", "content": "hi"}))
        for part in ("Hel", "lo **wor", "ld**"):
            live.apply(ev.TextDelta("a1", part))
        await pilot.pause(0.1)
        stream = view.find(lambda it: it.streaming)
        assert stream is not None and stream.text == "Hello **world**"
        assert "⟳ streaming" in "\n".join(s.text for s in app.screen._compositor.render_strips())
        live.apply(ev.MessageAdded({"id": "a1", "role": "assistant", "content": "Hello **world**",
                                    "status": "sent"}))
        await pilot.pause()
        assert [(it.kind, it.seq, it.streaming) for it in view.items] == [
            ("user", 1, False), ("assistant", 2, False)]
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "Hello world" in text and "streaming" not in text


async def test_reading_writes_nothing_and_the_first_send_resumes(
        service: SessionService) -> None:
    sid = write_session(service, "Old", [msg("user", "earlier", 1), msg("assistant", "ok", 2)])
    path = service.get(sid).path
    tear(path)  # a torn tail, left alone by readers
    before, raw = kinds(service, sid), path.read_bytes()
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:  # open it, page it, leave it: no write
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        await pilot.press("ctrl+o")
        await settle(pilot)
    assert path.read_bytes() == raw
    app = make_app(service, open_session=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.screen
        assert isinstance(chat, ChatScreen) and chat.state == "idle"
        assert path.read_bytes() == raw
        await send(pilot, "continue please")
        await wait_for(pilot, lambda: chat.state == "idle" and "run_end" in kinds(service, sid))
        await settle(pilot)
        after = kinds(service, sid)[len(before):]
        assert "session_resumed" in after and "run_start" in after
        assert after.index("session_resumed") < after.index("run_start")
        text = screen_text(app)
        assert "Resumed (transcript)" in text and "continue please" in text
    assert kinds(service, sid)[-1] == "session_end"


async def test_a_session_written_elsewhere_opens_read_only(service: SessionService) -> None:
    sid = write_session(service, "Busy", [msg("user", "hello", 1)])
    with service.open_writer(sid):  # another writer holds the lock
        app = make_app(service, open_session=sid)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            chat = app.screen
            assert isinstance(chat, ChatScreen) and chat.state == "read-only"
            assert chat.query_one(PromptArea).disabled
            assert "read-only" in screen_text(app) and "hello" in screen_text(app)
    assert kinds(service, sid)[-1] == "transcript_message"  # nothing was written
