"""The approval panel returns a typed decision: approve, deny with a reason, approve for
the session, per call when several calls are asked (keys on the focused panel)."""

from __future__ import annotations

from mttui.screens.approval import ApprovalDecision, ApprovalPanel, diff_text
from tests.support.approval import CALLS, Host, request


async def test_approve_one_call() -> None:
    app = Host(request(CALLS[:1]))
    async with app.run_test() as pilot:
        await pilot.press("1")
        await pilot.pause()
    assert app.result == ApprovalDecision("req_1", {"call_1": "approve"}, None, [])
    assert app.result.approved_all


async def test_deny_with_reason() -> None:
    app = Host(request(CALLS[:1]))
    async with app.run_test() as pilot:
        await pilot.press("2")
        await pilot.press(*"not in prod 1 3")  # typed into the reason, not decisions
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == ApprovalDecision("req_1", {"call_1": "deny"}, "not in prod 1 3", [])


async def test_deny_without_reason() -> None:
    app = Host(request(CALLS[:1]))
    async with app.run_test() as pilot:
        await pilot.press("2", "enter")
        await pilot.pause()
    assert app.result is not None
    assert app.result.decisions == {"call_1": "deny"} and app.result.reason is None


async def test_per_call_choices_and_approve_tool_for_session() -> None:
    app = Host(request(CALLS))
    async with app.run_test() as pilot:
        screen = app.query_one(ApprovalPanel)
        await pilot.press("3", "enter")  # shell for the session (confirmed): call_1, call_3
        assert screen.current == 1 and app.result is None
        await pilot.press("2", "enter")  # write_file denied, no reason
        await pilot.pause()
    assert app.result == ApprovalDecision(
        "req_1", {"call_1": "approve", "call_3": "approve", "call_2": "deny"}, None, ["shell"])


async def test_moving_between_calls_before_deciding() -> None:
    app = Host(request(CALLS))
    async with app.run_test() as pilot:
        await pilot.press("down", "down", "1")  # call_3 first
        await pilot.press("1")  # then the first open one after it wraps to call_1
        assert app.result is None
        await pilot.press("2", "enter")
        await pilot.pause()
    assert app.result is not None
    assert app.result.decisions == {"call_3": "approve", "call_1": "approve", "call_2": "deny"}


async def test_asked_again_after_resume_is_said() -> None:
    app = Host(request(CALLS[:1], again=True))
    async with app.run_test() as pilot:
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "asked again after resume" in text.lower()
        await pilot.press("1")


async def test_diff_preview_and_verbatim_command_are_shown() -> None:
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new [bold]x[/]\n"
    app = Host(request(CALLS[:2]), {"call_2": diff})
    async with app.run_test(size=(110, 34)) as pilot:
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "$ rm -rf build/" in text
        await pilot.press("down")
        await pilot.pause()
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "+new [bold]x[/]" in text and "-old" in text


def test_diff_colours_added_and_removed_lines() -> None:
    text = diff_text("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n")
    styles = {text.plain[span.start:span.end].strip(): str(span.style) for span in text.spans}
    assert styles["+new"] == "green" and styles["-old"] == "red"
