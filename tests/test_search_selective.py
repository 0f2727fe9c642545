"""Search asks each FTS shard for the rarest trigrams of a query only (search.SELECTIVE).

Any subset of a token's trigrams finds every message holding the token (instr then
confirms each candidate), so the hits must be exactly those of a plain scan,
whichever trigrams were chosen, in whichever shard the rows are.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mttui.session.index import search as search_mod
from mttui.session.service import SessionService

WORDS = ["pillow", "zephyrquill", "billing", "quilt", "will", "hill", "快速排序", "排序算法",
         "Function", "functional", "unction", "ill", "zeph"]  # fmt: skip


def _session(svc: SessionService, texts: list[str]) -> str:
    with svc.create_session(provider="p", model="m", title="t") as w:
        for i, text in enumerate(texts):
            w.append("transcript_message",
                     message={"id": f"{w.session_id}-{i}", "role": "user", "content": text})
        return w.session_id


def _scan(texts: dict[tuple[str, int], str], query: str) -> set[tuple[str, int]]:
    tokens = query.lower().split()
    return {key for key, text in texts.items() if all(t in text.lower() for t in tokens)}


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    asked: list[str | None] = []
    real = search_mod._shard_match

    def spy(conn, name, grams):  # type: ignore[no-untyped-def]
        match = real(conn, name, grams)
        asked.append(match)
        return match

    monkeypatch.setattr(search_mod, "_shard_match", spy)
    return asked


def test_a_rare_trigram_is_asked_for_without_the_common_ones(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_mod, "SELECTIVE", 8)
    svc = SessionService(home, project)
    texts = [f"a pillow on the hill {i}" for i in range(40)] + ["the zephyrquill sings"] * 2
    sid = _session(svc, texts)
    asked = _spy(monkeypatch)
    hits = svc.search("zephyrquill", scope="all")
    assert sorted(h.seq for h in hits) == [41, 42] and {h.session_id for h in hits} == {sid}
    chosen = [m for m in asked if m is not None]
    assert chosen, asked
    assert all('"ill"' not in m and m.count('"') <= 2 * search_mod.RAREST for m in chosen)
    asked.clear()
    assert len(svc.search("pillow", scope="all", limit=100)) == 40  # all common: all asked
    assert any(m is not None and '"ill"' in m for m in asked)


def test_a_shard_without_one_of_the_trigrams_is_not_asked(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = SessionService(home, project)
    old = _session(svc, ["zephyrquill in the older half"] + ["filler words here"] * 30)
    _session(svc, ["nothing of that kind"] * 31)
    svc.reindex()  # the split falls between the two sessions
    asked = _spy(monkeypatch)
    assert [(h.session_id, h.seq) for h in svc.search("zephyrquill", scope="all")] == [(old, 1)]
    assert asked[0] is None and asked[1] is not None  # the newer shard: skipped


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    messages=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1,
                      max_size=40),
    query=st.lists(st.sampled_from(WORDS + ["ill qui", "ph", "排序", "unc"]), min_size=1,
                   max_size=3),
    selective=st.sampled_from([1, 2, 4, 64]),
    rebuild=st.booleans(),
)  # fmt: skip
def test_the_hits_are_those_of_a_scan(
    messages: list[list[str]], query: list[str], selective: int, rebuild: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search_mod, "SELECTIVE", selective)
    with tempfile.TemporaryDirectory() as tmp:
        svc = SessionService(Path(tmp) / "home", Path(tmp) / "project")
        texts: dict[tuple[str, int], str] = {}
        half = len(messages) // 2
        for part in (messages[:half], messages[half:]):
            if part:
                sid = _session(svc, [" ".join(words) for words in part])
                texts.update(((sid, i + 1), " ".join(w)) for i, w in enumerate(part))
        if rebuild:
            svc.reindex()  # rows in both shards
        q = " ".join(query)
        hits = {(h.session_id, h.seq) for h in svc.search(q, scope="all", limit=1000)}
        assert hits == _scan(texts, q)
        svc.close()
