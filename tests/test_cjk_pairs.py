"""2-character CJK queries are served by the ``cjk_grams`` side table: the same hits
as a scan of every message, kept in step through appends, text updates, deletes and
a rebuild."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mttui.session.index import cjk
from mttui.session.service import SessionService
from tests.support.logs import message, new_session

WORDS = ["缓存", "修复", "日志", "キャッシュ", "캐시", "cache", "错误处理", "排序"]


def _scan(service: SessionService, term: str) -> set[tuple[str, int]]:
    """What a scan of every message finds (the reference)."""
    conn = sqlite3.connect(service.layout.index_path)
    try:
        rows = conn.execute(
            "SELECT s.id, m.msg_seq, m.text FROM messages m JOIN sessions s USING (sess) "
            "WHERE s.deleting = 0").fetchall()  # fmt: skip
    finally:
        conn.close()
    return {(sid, seq) for sid, seq, text in rows if term in text}


def _hits(service: SessionService, term: str) -> set[tuple[str, int]]:
    return {(h.session_id, h.seq) for h in service.search(term, scope="all", limit=200)}


texts = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=4).map(" ".join),
                 min_size=1, max_size=6)


@settings(max_examples=15, deadline=None)
@given(sessions=st.lists(texts, min_size=1, max_size=3), drop=st.booleans())
def test_pair_queries_find_what_a_scan_finds(tmp_path_factory, sessions, drop) -> None:  # type: ignore[no-untyped-def]
    root: Path = tmp_path_factory.mktemp("cjk")
    service = SessionService(root / "home", root / "project")
    ids = []
    for n, contents in enumerate(sessions):
        records = [message(f"m{n}-{i}", "user" if i % 2 == 0 else "assistant", text,
                           status="sent") for i, text in enumerate(contents)]  # fmt: skip
        ids.append(new_session(service, records, title=f"s{n}").session_id)
    if drop and len(ids) > 1:
        service.delete(ids[0])
    for term in ("缓存", "修复", "ッシ", "캐시", "处理"):
        assert _hits(service, term) == _scan(service, term), term
    service.reindex()
    for term in ("缓存", "ッシ"):
        assert _hits(service, term) == _scan(service, term), term


def test_the_pairs_are_used(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    new_session(service, [message("a", "user", "请修复缓存", status="sent")], title="t")
    service.search("缓存", scope="all", limit=5)  # catches the index up
    conn = sqlite3.connect(service.layout.index_path)
    try:
        plan = " ".join(str(r) for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT m.rid FROM cjk_grams g JOIN messages m ON m.rid = g.rid "
            "WHERE g.gram = 1 ORDER BY g.rid DESC LIMIT 5"))  # fmt: skip
        assert conn.execute("SELECT count(*) FROM cjk_grams").fetchone()[0] == 4
    finally:
        conn.close()
    assert "SEARCH g USING PRIMARY KEY (gram=?)" in plan and "SCAN" not in plan


CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]{2,}")


def _pairs_one_by_one(text: str) -> set[int]:
    """The reference: every adjacent pair of every CJK run, packed one at a time."""
    return {cjk.pack(m.group()[i : i + 2]) for m in CJK_RUN.finditer(text)
            for i in range(len(m.group()) - 1)}  # fmt: skip


cjk_text = st.text(st.sampled_from("缓存修复日志キャッシュ캐시ㄱ豈〇 \n\tab\x00é\U00020000"),
                   max_size=60)


@settings(max_examples=300, deadline=None)
@given(text=cjk_text)
def test_the_pairs_of_a_text_are_every_adjacent_cjk_pair(text: str) -> None:
    assert cjk.grams(text) == _pairs_one_by_one(text)


def test_a_pair_is_two_characters_of_the_cjk_ranges() -> None:
    edges = [0x303F, 0x3040, 0x30FF, 0x3100, 0x33FF, 0x3400, 0x4DBF, 0x4DC0, 0x4DFF, 0x4E00,
             0x9FFF, 0xA000, 0xABFF, 0xAC00, 0xD7AF, 0xD7B0, 0xF8FF, 0xF900, 0xFAFF, 0xFB00]
    cjk_class = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
    for a in edges + [ord("a")]:
        for b in edges:
            pair = chr(a) + chr(b)
            expected = bool(cjk_class.match(pair[0]) and cjk_class.match(pair[1]))
            assert cjk.is_pair(pair) is expected, pair
    assert cjk.is_pair("缓存") and not cjk.is_pair("缓") and not cjk.is_pair("缓存区")
    assert cjk.grams("ab缓存x区域") == {cjk.pack("缓存"), cjk.pack("区域")}
