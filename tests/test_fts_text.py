"""A shard is given each message's distinct pieces (shards.fts_text), not its text.

That is only right if every trigram a query asks for is still there: a token never
spans whitespace as ``parse_query`` splits it, its trigrams are taken inside its
pieces only (``fts.trigrams``), and each piece of the text that can hold one is kept.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mttui.session.index import shards
from mttui.session.index.fts import ascii_lower, parse_query, trigrams
from mttui.session.index.schema import SCHEMA_VERSION
from mttui.session.service import SessionService

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
PIECES = ["a", "b", "ab", "Def", "快速", "排序", "é", "_", "(", ".", "-", "=", "'", '"',
          "、", "·", "\x1c", *SPACES]
TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@given(text=TEXT, data=st.data())
def test_every_trigram_a_query_asks_for_is_in_what_the_shard_is_given(
    text: str, data: st.DataObject
) -> None:
    given_text = shards.fts_text(text)
    assert len(given_text) <= len(text)
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    given_low = ascii_lower(given_text)
    for token in parse_query(text[start:end]).tokens:  # any query drawn from the text
        for gram in trigrams(token):
            assert " " not in gram and gram in given_low, (token, gram)


def test_a_text_is_cut_at_whitespace_and_punctuation_but_underscores_and_dots() -> None:
    for space in SPACES:
        assert parse_query(f"ab{space}cd").tokens == ["ab", "cd"], repr(space)
    assert shards.fts_text("x = f(self.value, 3.11) + f(self_value)") == (
        "self.value 3.11 self_value")
    assert trigrams("f(value,") == ["val", "alu", "lue"]
    assert trigrams("a.b") == ["a.b"] and trigrams("a+b") == [] and trigrams("->") == []
    # Cut at ASCII punctuation only
    assert shards.fts_text("快速排序。快速排序，a+b") == "快速排序。快速排序，a"
    assert shards.fts_text("x y zz") == ""  # nothing that can hold a trigram


def test_tokens_with_no_trigram_are_still_found(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    with svc.create_session(provider="p", model="m") as w:
        for i, text in enumerate(["x = a+b->c", "a+b 缓存 value", "ab"], 1):
            w.append("transcript_message", message={"id": f"m{i}", "role": "user", "content": text})
    assert {h.message_id for h in svc.search("a+b")} == {"m1", "m2"}
    assert [h.message_id for h in svc.search("b->c")] == ["m1"]
    assert [h.message_id for h in svc.search("a+b 缓存")] == ["m2"]  # through its CJK pair
    assert [h.message_id for h in svc.search("A+B VALUE")] == ["m2"]


def test_repeated_words_are_given_once_and_still_found(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    code = "\n".join(f"    value = compute(value, {i})  # 快速排序 step" for i in range(200))
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "m1", "role": "tool", "content": code})
        w.append("transcript_message", message={"id": "m2", "role": "user", "content": "x"})
    assert len(shards.fts_text(code)) < len(code) / 3
    for query in ("compute(value,", "VALUE", "199)", "排序", "快速排序 step", "= comp",
                  "e, 19", "(value, 42)", "#"):
        assert [h.message_id for h in svc.search(query)] == ["m1"], query
    assert svc.search("value compute") and not svc.search("value199")


def _migrated_and_whole(index: Path) -> None:
    """``index`` is at the current schema, each shard holds exactly the pieces of its
    rows, and no FTS row is still owed."""
    conn = sqlite3.connect(index)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 13
    shards.register(conn)
    shards.integrity_check(conn)
    assert conn.execute("SELECT count(*) FROM fts_owed").fetchone()[0] == 0
    conn.close()


def test_an_index_of_schema_10_is_given_words_from_its_first_search(
    home: Path, project: Path
) -> None:
    svc = SessionService(home, project)
    texts = ["alpha beta alpha gamma " * 20, "delta epsilon 缓存失效 delta"]
    with svc.create_session(provider="p", model="m") as w:
        for i, text in enumerate(texts):
            w.append("transcript_message", message={"id": f"m{i}", "role": "user", "content": text})
    svc.close()
    old = sqlite3.connect(svc.layout.index_path)  # what schema 10 held: views of the text
    old.isolation_level = None
    for name in shards.SHARDS:
        old.execute(f"DROP TABLE {name}")
        old.execute(f"DROP VIEW {shards.ROWS[name]}")
    old.execute(f"CREATE VIEW {shards.ROWS[shards.OLD]} AS SELECT * FROM messages "
                "WHERE rid <= (SELECT upto FROM fts_split)")
    old.execute(f"CREATE VIEW {shards.ROWS[shards.NEW]} AS SELECT * FROM messages "
                "WHERE rid > (SELECT upto FROM fts_split)")
    for name in shards.SHARDS:
        old.execute(shards.ddl(name, shards.ROWS[name]))
        old.execute(f"INSERT INTO {name} ({name}) VALUES ('rebuild')")
    old.execute("PRAGMA user_version = 10")
    old.close()
    again = SessionService(home, project)
    assert [h.message_id for h in again.search("gamma")] == ["m0"]
    assert [h.message_id for h in again.search("失效 epsilon")] == ["m1"]
    _migrated_and_whole(svc.layout.index_path)


def test_an_index_of_schema_11_is_given_pieces_from_its_first_search(
    home: Path, project: Path
) -> None:
    svc = SessionService(home, project)
    with svc.create_session(provider="p", model="m") as w:
        for i, text in enumerate(["self.cache = load(self.path)", "x"]):
            w.append("transcript_message", message={"id": f"m{i}", "role": "user", "content": text})
    svc.close()
    old = sqlite3.connect(svc.layout.index_path)  # what schema 11 held: distinct words
    old.isolation_level = None
    old.create_function(shards.FUNCTION, 1, lambda t: " ".join(dict.fromkeys(t.split())))
    for name in shards.SHARDS:
        old.execute(f"INSERT INTO {name} ({name}) VALUES ('rebuild')")
    old.execute("PRAGMA user_version = 11")
    old.close()
    again = SessionService(home, project)
    assert [h.message_id for h in again.search("cache load")] == ["m0"]
    assert [h.message_id for h in again.search("(self.path)")] == ["m0"]
    _migrated_and_whole(svc.layout.index_path)
