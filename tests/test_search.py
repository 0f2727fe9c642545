"""Search: trigram FTS with instr for short tokens, snippets, scopes, hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.session.index import search as search_mod
from mttui.session.models import SNIPPET_END, SNIPPET_START
from mttui.session.service import SessionService

HOSTILE = [
    '"', 'foo"', "*", "AND", "OR x", "NEAR(", "NEAR(a b)", "-x", "'", "%", "_", "\\", "😀",
    "x" * 10_000, " ".join(["ab"] * 3000), "   ", "", "\t\n", "a\x00b", "\ud800", "(", ")",
    "col:val", "^start", "a OR b NOT c", "ls -la", "C++", "node.js", "3.14", "it's", "{}", "[]",
]  # fmt: skip


def _session(svc: SessionService, texts: list[str], title: str | None = None) -> str:
    with svc.create_session(provider="p", model="m", title=title) as w:
        for i, text in enumerate(texts):
            msg = {"id": f"{w.session_id}-{i}", "role": "user", "content": text}
            w.append("transcript_message", message=msg)
        return w.session_id


def test_case_insensitive_english_with_marked_snippet(svc: SessionService) -> None:
    sid = _session(svc, ["nothing here", "The Parser failed on line 3", "other"])
    hits = svc.search("pARSER")
    assert [(h.session_id, h.seq) for h in hits] == [(sid, 2)]
    assert f"{SNIPPET_START}Parser{SNIPPET_END}" in hits[0].snippet
    assert hits[0].role == "user" and hits[0].message_id == f"{sid}-1"


def test_cjk_four_and_two_characters(svc: SessionService) -> None:
    _session(svc, ["我们使用快速排序算法", "缓存失效了", "无关内容"])
    [four] = svc.search("快速排序")
    assert f"{SNIPPET_START}快速排序{SNIPPET_END}" in four.snippet
    [two] = svc.search("缓存")
    assert two.seq == 2 and f"{SNIPPET_START}缓存{SNIPPET_END}" in two.snippet


def test_tokens_are_anded_long_and_short_mixed(svc: SessionService) -> None:
    _session(svc, ["alpha beta", "alpha gamma", "beta only", "alpha be"])
    assert {h.seq for h in svc.search("alpha beta")} == {1}
    assert {h.seq for h in svc.search("alpha be")} == {1, 4}
    assert {h.seq for h in svc.search("be ta")} == {1, 3}


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_input_returns_a_list(svc: SessionService, query: str) -> None:
    _session(svc, ["plain text", 'say "foo" and foo" then 100% of a_b \\ it\'s 😀 C++ 3.14'])
    hits = svc.search(query)
    assert isinstance(hits, list)


def test_special_characters_match_literally(svc: SessionService) -> None:
    _session(svc, ["plain text", 'quote foo" here', "100% sure", "snake_case", "back\\slash"])
    assert [h.seq for h in svc.search('foo"')] == [2]
    assert [h.seq for h in svc.search('"')] == [2]
    assert [h.seq for h in svc.search("%")] == [3]  # not a LIKE wildcard
    assert [h.seq for h in svc.search("_")] == [4]
    assert [h.seq for h in svc.search("\\")] == [5]
    assert svc.search("   ") == []


def test_scopes_session_project_all(svc: SessionService, home: Path, tmp_path: Path) -> None:
    a = _session(svc, ["needle one"])
    b = _session(svc, ["needle two"])
    other_project = tmp_path / "other"
    other_project.mkdir()
    other = SessionService(home, other_project)
    c = _session(other, ["needle three"])
    assert {h.session_id for h in svc.search("needle")} == {a, b}
    assert {h.session_id for h in svc.search("needle", scope="all")} == {a, b, c}
    assert {h.session_id for h in svc.search("needle", session_id=b)} == {b}
    assert {h.session_id for h in svc.search("needle", scope="session", session_id=a)} == {a}


def test_more_occurrences_rank_higher_and_limit_applies(svc: SessionService) -> None:
    _session(svc, ["word once here and some padding text", "word word word", "no match"])
    hits = svc.search("word", limit=1)
    assert len(hits) == 1 and hits[0].seq == 2
    assert hits[0].score > svc.search("word")[1].score


def test_a_query_with_nothing_to_fold_ranks_and_marks_like_any(svc: SessionService) -> None:
    # CJK and digits are counted in the text as it is (no ASCII letter to fold)
    _session(svc, ["Code 缓存 once, Padding Text Here", "缓存缓存缓存 ABC", "无关"])
    hits = svc.search("缓存")
    assert [h.seq for h in hits] == [2, 1]
    assert hits[0].score > hits[1].score > 0
    assert f"{SNIPPET_START}缓存{SNIPPET_END}" in hits[1].snippet
    assert hits[1].snippet.startswith("Code ")  # the text as stored, not lower-cased
    _session(svc, ["build 2024 2024", "build 2024 then a much longer text than the other"])
    assert [h.seq for h in svc.search("2024")] == [1, 2]


def test_common_term_ranks_only_newest_candidates(
    svc: SessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_mod, "CANDIDATES", 20)
    _session(svc, [f"common {i}" for i in range(60)])
    hits = svc.search("common", limit=50)
    assert len(hits) == 20
    assert min(h.seq for h in hits) == 41  # the newest 20 matches


def test_updated_content_is_searched_and_old_text_is_not(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "a", "role": "assistant", "content": "draft"})
        w.append("message_update", message_id="a", content="final answer", status="sent")
    assert svc.search("draft") == []
    assert [h.message_id for h in svc.search("final answer")] == ["a"]


def test_title_matches_boost_and_surface_sessions(svc: SessionService) -> None:
    titled = _session(svc, ["unrelated words", "mentions zebra once"], title="Zebra migration")
    plain = _session(svc, ["hello", "zebra zebra zebra"])
    only_title = _session(svc, ["nothing"], title="All about zebra")
    hits = svc.search("zebra")
    assert hits[0].session_id == titled and hits[0].seq == 2
    by_session = {h.session_id: h for h in hits}
    assert set(by_session) == {titled, plain, only_title}
    assert by_session[only_title].seq == 1
    assert f"{SNIPPET_START}zebra{SNIPPET_END}" in by_session[only_title].snippet


def test_sessions_found_by_title_alone_are_the_newest_within_the_limit(
    svc: SessionService,
) -> None:
    titled = [_session(svc, ["nothing here"], title=f"okapi notes {i}") for i in range(7)]
    hit = _session(svc, ["first words", "an okapi in the text"])  # titled "first words"
    hits = svc.search("okapi", limit=4)
    # A message hit in a titled session would outrank all; here the title-only sessions
    # (one score) come newest first, then the message hit.
    assert [h.session_id for h in hits] == titled[::-1][:4]
    assert [(h.session_id, h.seq) for h in svc.search("okapi", limit=20)] == [
        *((sid, 1) for sid in titled[::-1]), (hit, 2)]


def test_deleted_sessions_are_not_found(svc: SessionService) -> None:
    sid = _session(svc, ["ephemeral content"])
    svc.delete(sid)
    assert svc.search("ephemeral", scope="all") == []


def test_snippet_is_one_line_around_a_far_match(svc: SessionService) -> None:
    text = ("lorem ipsum dolor\n" * 40) + "the TARGET word" + (" trailing" * 40)
    _session(svc, [text])
    [hit] = svc.search("target")
    assert "\n" not in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert f"{SNIPPET_START}TARGET{SNIPPET_END}" in hit.snippet
    assert len(hit.snippet) < 200
