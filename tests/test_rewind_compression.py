"""A conversation rewind puts back the compression state as of just before the chosen
message: after a compression, its summary (and what it kept); before it, no summary."""

from __future__ import annotations

from pathlib import Path

from mttui.session.service import SessionService
from tests.support.compression import FILLER, RoutedOpenAI, after_summary, is_summary_message
from tests.support.fake_openai import text
from tests.support.logs import records
from tests.support.resume import cli
from tests.support.timetravel import run_json


def _run(home: Path, project: Path, routed: RoutedOpenAI, *args: str) -> None:
    r = cli(home, project, *args, OPENAI_BASE_URL=routed.url, OPENAI_API_KEY="sk-test",
            MTTUI_TIMEOUT="20")
    assert r.returncode == 0, r.stderr


def _sent(routed: RoutedOpenAI) -> list[dict[str, object]]:
    body = routed.agent_requests[-1]
    return list(body["messages"])


def test_rewinds_before_and_after_a_compression(
    home: Path, project: Path, routed: RoutedOpenAI
) -> None:
    routed.add(text("answer one " + FILLER * 30), text("answer two " + FILLER * 30),
               text("answer three " + FILLER * 30), text("answer four " + FILLER * 30),
               text("answer five"))
    _run(home, project, routed, "exec", "question one")
    for word in ("two", "three", "four"):
        _run(home, project, routed, "exec", "--continue", f"question {word}")
    _run(home, project, routed, "compact", "last")
    _run(home, project, routed, "exec", "--continue", "question five")
    sid = SessionService(home, project).resolve("last").id
    log = records(SessionService(home, project).resolve(sid).path)
    comp = next(r for r in log if r["type"] == "compression")
    texts = {r["message"]["id"]: r["message"]["content"] for r in log
             if r["type"] == "transcript_message"}
    kept = [texts[i] for i in comp["kept_message_ids"]]
    assert "question one" not in kept
    # to "question five" (seq 9): the summary, what it kept, then the new prompt
    run_json(home, project, "rewind", sid, "--to", "9", "--conversation", "--yes")
    routed.add(text("again"))
    _run(home, project, routed, "exec", "--continue", "question five, again")
    sent = _sent(routed)
    assert is_summary_message(sent[1])
    assert [m["content"] for m in after_summary({"messages": sent})] == [
        *kept, "question five, again"]
    # to "question two" (seq 3), before the compression: no summary, messages 1-2 only
    run_json(home, project, "rewind", sid, "--to", "3", "--conversation", "--yes")
    routed.add(text("older"))
    _run(home, project, routed, "exec", "--continue", "question two, again")
    sent = _sent(routed)
    assert not any(is_summary_message(m) for m in sent)
    assert [m["content"] for m in sent[1:]] == ["question one", "answer one " + FILLER * 30,
                                                "question two, again"]
    plan = run_json(home, project, "resume-check", sid)
    assert plan["warnings"] == [] and plan["messages_in_view"] == 4
