"""Compression against the scripted server: a long tool loop compressed mid-run,
chained summaries, kept ids, chunked summaries, a failing summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_openai import error, text, tools
from test_compression_support import (  # noqa: F401 - fixture by name
    FILLER,
    after_summary,
    assert_pairs,
    ids_of,
    is_summary_message,
    records,
    routed_fixture,
    snapshot_text,
    transcript,
)

from mttui.graph.compression.cut import is_summary
from mttui.graph.compression.summary import SUMMARY_HEADER
from mttui.graph.events import Compressed, Notice
from mttui.graph.resume.plan import check_resume
from mttui.session.reader import read_all
from mttui.session.service import SessionService
from mttui.session.transcript import fold

PROMPT = "Read notes.txt twelve times and tell me what changed."


def _view(runner: Any) -> list[Any]:
    return list(runner.graph.get_state(runner.config).values["messages"])


def test_long_tool_loop_is_compressed_mid_run_at_safe_points(
    make_runner: Any, routed: Any, project: Path, home: Path
) -> None:
    (project / "notes.txt").write_text(FILLER * 12)  # ~850 characters per read
    calls = [tools([(f"call_{i}", "read_file", {"path": "notes.txt"})], usage=None)
             for i in range(12)]
    routed.add(*calls, text("Nothing changed between the reads.", usage=None))
    runner = make_runner("openai", url=routed.url, approval="yolo", token_limit=2400)
    events = list(runner.run(PROMPT))
    assert events[-1].status == "completed", events[-1]
    done = [e for e in events if isinstance(e, Compressed)]
    comps = records(runner.writer.path, "compression")
    assert len(done) == len(comps) >= 2, "a server without usage must still trigger it"
    assert len(routed.summary_requests) == len(comps)
    log = transcript(runner.writer.path)
    assert sum(m["role"] == "tool" for m in log) == 12

    # every request: no tool message first after the summary, every call with its result
    for body in routed.agent_requests + routed.summary_requests:
        assert_pairs(body)
    for body in routed.agent_requests:
        rest = after_summary(body)
        assert rest[0]["role"] != "tool"
        assert rest[0] == {"role": "user", "content": PROMPT}  # the request, verbatim
    compressed = [b for b in routed.agent_requests if is_summary_message(b["messages"][1])]
    assert compressed, "no request was sent with a summary"

    # chained: each summary request carries the summary before it
    for k in range(1, len(comps)):
        sent = str(routed.summary_requests[k]["messages"])
        assert comps[k - 1]["summary"] in sent
    # the request right after each compression holds exactly [summary, kept…]
    order = [b for b in routed.requests]
    for k, comp in enumerate(comps):
        at = order.index(routed.summary_requests[k])
        following = order[at + 1]
        assert following["messages"][1]["content"] == SUMMARY_HEADER + comp["summary"]
        assert ids_of(after_summary(following), log) == comp["kept_message_ids"]
        assert comp["trigger"] == "auto" and comp["kept_count"] == len(comp["kept_message_ids"])
        assert comp["tokens_after"] < comp["tokens_before"]
        assert comp["removed_count"] > 0

    # the saved state is [summary, kept…, after…] and pairs up
    view = _view(runner)
    assert is_summary(view[0]) and not any(is_summary(m) for m in view[1:])
    assert view[1].type == "human" and view[1].content == PROMPT
    # the log tells the same view (the request kept in front of the recent steps)
    summary, logged_view = fold(read_all(runner.writer.path)[0]).model_view()
    assert summary == comps[-1]["summary"]
    assert [m["id"] for m in logged_view] == [m.id for m in view[1:]]
    plan = check_resume(SessionService(home, project).layout,
                        runner.writer.project_hash, runner.writer.session_id)
    assert (plan.mode, plan.compression_used, plan.warnings) == ("execution", True, [])
    assert plan.messages_in_view == len(view)
    # the history still pages through every original message
    service = SessionService(home, project)
    sid = runner.writer.session_id
    seen: list[str] = []
    before = None
    while True:
        page = service.history(sid, limit=5, before=before)
        seen = [m.id for m in page.messages] + seen
        if not page.has_more:
            break
        before = page.next_before
    assert seen == [m["id"] for m in log]


def test_failing_summary_changes_nothing_and_the_run_goes_on(
    make_runner: Any, routed: Any
) -> None:
    runner = make_runner("openai", url=routed.url, token_limit=600)
    routed.add(text("first answer", usage=None))
    list(runner.run("first " + FILLER * 5))
    before = [m.id for m in _view(runner)]
    routed.summary(error(500, "summary server broke"))
    routed.add(text("second answer", usage=None))
    events = list(runner.run("second " + FILLER * 5))
    assert events[-1].status == "completed"
    assert len(routed.summary_requests) == 1, "compression was not attempted"
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("compression failed" in n and "nothing changed" in n for n in notices)
    assert not records(runner.writer.path, "compression")
    assert not [e for e in events if isinstance(e, Compressed)]
    after = [m.id for m in _view(runner)]
    assert after[:2] == before and len(after) == 4  # + the new request and its answer
    sent = routed.agent_requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert not any(is_summary_message(m) for m in sent)


def test_older_part_larger_than_the_context_is_summarized_in_pieces(
    make_runner: Any, routed: Any, project: Path
) -> None:
    (project / "big.log").write_text("0123456789" * 2_000)  # one 20 000-character result
    runner = make_runner("openai", url=routed.url, approval="yolo", token_limit=1000,
                         auto_compress=False)  # fmt: skip
    routed.add(tools([("call_big", "shell", {"command": "cat big.log"})], usage=None),
               text("a big log", usage=None))  # fmt: skip
    list(runner.run("show me big.log"))
    for i in range(8):
        routed.add(text(f"answer {i}", usage=None))
        list(runner.run(f"turn {i}: " + FILLER * 6))
    events = list(runner.compact("keep the turn numbers"))
    assert [type(e) for e in events] == [Compressed]
    reqs = routed.summary_requests
    assert len(reqs) >= 2, "the older part should not fit one request"
    for k, body in enumerate(reqs):
        assert "Additional instructions: keep the turn numbers" in body["messages"][0]["content"]
        assert_pairs(body)
        size = sum(len(str(m.get("content") or "")) for m in body["messages"][1:])
        assert size // 4 <= 1000, f"summary request {k} does not fit the context: {size}"
        if k:  # each piece starts with the summary of the pieces before it
            assert body["messages"][1]["content"] == SUMMARY_HEADER + snapshot_text(k)
    assert "characters omitted" in str(reqs[0]["messages"])  # the big result, clipped
    comp = records(runner.writer.path, "compression")[0]
    assert comp["summary"] == snapshot_text(len(reqs))
    assert comp["trigger"] == "manual"
    view = _view(runner)
    assert [m.id for m in view[1:]] == comp["kept_message_ids"]
