"""A shard is given each message's distinct words (shards.fts_text), not its text.

That is only right if every token a query can hold is still found: a token never
spans whitespace as ``parse_query`` splits it, and each word of the text is kept.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mttui.session.index import shards
from mttui.session.index.fts import ascii_lower, parse_query
from mttui.session.index.schema import SCHEMA_VERSION
from mttui.session.service import SessionService

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
PIECES = ["a", "b", "ab", "Def", "快速", "排序", "_", "(", ".", *SPACES]
TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@given(text=TEXT, data=st.data())
def test_every_token_of_a_text_is_in_what_the_shard_is_given(
    text: str, data: st.DataObject
) -> None:
    given_text = shards.fts_text(text)
    assert set(given_text.split()) == set(text.split())
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    for token in parse_query(text[start:end]).tokens:  # any query drawn from the text
        assert token in ascii_lower(given_text)


def test_a_query_splits_where_a_text_splits() -> None:
    for space in SPACES:
        assert parse_query(f"ab{space}cd").tokens == ["ab", "cd"], repr(space)
        assert shards.fts_text(f"ab{space}cd ab") == "ab cd"


def test_repeated_words_are_given_once_and_still_found(home: Path, project: Path) -> None:
    svc = SessionService(home, project)
    code = "\n".join(f"    value = compute(value, {i})  # 快速排序 step" for i in range(200))
    with svc.create_session(provider="p", model="m") as w:
        w.append("transcript_message", message={"id": "m1", "role": "tool", "content": code})
        w.append("transcript_message", message={"id": "m2", "role": "user", "content": "x"})
    assert len(shards.fts_text(code)) < len(code) / 3
    for query in ("compute(value,", "VALUE", "199)", "排序", "快速排序 step", "= comp"):
        assert [h.message_id for h in svc.search(query)] == ["m1"], query
    assert svc.search("value compute") and not svc.search("value199")


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
    conn = sqlite3.connect(svc.layout.index_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    shards.register(conn)
    shards.integrity_check(conn)  # each shard holds exactly the words of its rows
    assert conn.execute("SELECT count(*) FROM fts_owed").fetchone()[0] == 0
    conn.close()
