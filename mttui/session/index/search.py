"""Full-text search over transcript messages (and session titles)."""

from __future__ import annotations

import sqlite3

from ..models import SearchHit, SearchScope
from . import cjk, shards
from .fts import (
    ParsedQuery,
    matches_all,
    needles,
    parse_query,
    quote,
    score,
    snippet,
    trigrams,
)
from .queries import clamp_limit

# How many of the newest matching messages are ranked. Ranking every match of a
# common term (bm25 over 300 000 rows) costs seconds; the newest N cost ~ms.
CANDIDATES = 500
TITLE_BOOST = 1.0

# FTS5 decodes the whole row list of every trigram a query ANDs: one common trigram
# ("ill" of "zephyrquill", in 200 000 of 1 M rows) costs milliseconds that a rare one
# ("zep", 18 rows) does not. A trigram in fewer than SELECTIVE rows of a shard is
# rare there; when a query has rare ones, that shard is asked for its RAREST rarest
# only (any subset of the trigrams is correct: instr confirms every candidate).
SELECTIVE = 64
RAREST = 3
MAX_PROBES = 24  # trigrams counted per shard, at most (a hostile query has ~100)
TITLES_PER_QUERY = 500  # sessions found by their title: first messages read per query

_SELECT = "SELECT m.rid, m.sess, m.msg_seq, m.id, m.role, m.text, m.created_at"
Candidate = tuple[int, int, int, str, str, str, str]  # a row of _SELECT
ScopeKey = int | str | None  # the session's ``sess``, the project hash, or nothing (all)


def _scope_sql(scope: SearchScope, key: ScopeKey) -> tuple[str, list[ScopeKey]]:
    # The unary "+" keeps SQLite from driving the scan by the (sess, msg_seq) index
    # and then sorting every match: the scan must walk rowids newest-first and stop.
    if scope == "session":
        return "m.sess = ?", [key]
    if scope == "project":
        return "+m.sess IN (SELECT sess FROM sessions WHERE project_hash = ? AND deleting = 0)", [
            key
        ]
    return "+m.sess IN (SELECT sess FROM sessions WHERE deleting = 0)", []


def _instr(token: str) -> str:
    # lower() copies every row's text; a token without ASCII letters doesn't need it.
    if any("a" <= c <= "z" for c in token):
        return "instr(lower(m.text), ?) > 0"
    return "instr(m.text, ?) > 0"


def _candidates(
    conn: sqlite3.Connection, q: ParsedQuery, scope: SearchScope, key: ScopeKey
) -> list[Candidate]:
    where, args = _scope_sql(scope, key)
    conds = [where] + [_instr(t) for t in q.long + q.short]
    args = [*args, *q.long, *q.short]
    grams = list(dict.fromkeys(g for tok in q.long for g in trigrams(tok)))
    if grams:
        try:
            # The newer shard's rows all come after the older one's: its newest
            # matches first, the older shard only asked for what is still missing.
            found: list[Candidate] = []
            for name in shards.SHARDS:
                match = _shard_match(conn, name, grams)
                if match is None:
                    continue  # a trigram no row of this shard has
                found += conn.execute(
                    f"{_SELECT} FROM {name} JOIN messages m ON m.rid = {name}.rowid "
                    f"WHERE {name} MATCH ? AND {' AND '.join(conds)} "
                    f"ORDER BY {name}.rowid DESC LIMIT ?",
                    (match, *args, CANDIDATES - len(found)),
                ).fetchall()
                if len(found) >= CANDIDATES:
                    break
            return found
        except sqlite3.OperationalError:
            pass  # never expected with quoted trigrams; the instr scan below is always valid
    pairs = [t for t in q.short if cjk.is_pair(t)]
    if pairs:  # no token with a trigram (``a+b 缓存``): a pair, if there is one
        # A 2-character CJK word: its pair's rows in cjk_grams, newest first (the
        # primary key (gram, rid) walked backwards), confirmed by instr like the rest.
        return conn.execute(
            f"{_SELECT} FROM cjk_grams g JOIN messages m ON m.rid = g.rid "
            f"WHERE g.gram = ? AND {' AND '.join(conds)} ORDER BY g.rid DESC LIMIT ?",
            (cjk.pack(pairs[0]), *args, CANDIDATES),
        ).fetchall()
    order = "m.msg_seq DESC" if scope == "session" else "m.rid DESC"
    return conn.execute(
        f"{_SELECT} FROM messages m WHERE {' AND '.join(conds)} ORDER BY {order} LIMIT ?",
        (*args, CANDIDATES),
    ).fetchall()


def _shard_match(conn: sqlite3.Connection, name: str, grams: list[str]) -> str | None:
    """What shard ``name`` is asked to MATCH: the rarest of the query's trigrams
    ``grams`` there when some are rare (``SELECTIVE``), else all of them; ``None`` when
    one of them is in no row of the shard (nothing there can match)."""
    rare: list[tuple[int, str]] = []
    for gram in grams[:MAX_PROBES]:
        rows = len(conn.execute(f"SELECT rowid FROM {name} WHERE {name} MATCH ? LIMIT ?",
                                (quote(gram), SELECTIVE)).fetchall())  # fmt: skip
        if rows == 0:
            return None
        if rows < SELECTIVE:
            rare.append((rows, gram))
    if rare:
        grams = [gram for _, gram in sorted(rare)[:RAREST]]
    return " AND ".join(quote(gram) for gram in grams)


def _title_sessions(
    conn: sqlite3.Connection, q: ParsedQuery, scope: SearchScope, key: ScopeKey
) -> dict[int, tuple[str, str | None]]:
    """Sessions in scope whose title contains every token: sess -> (id, title)."""
    where = ["deleting = 0"] + ["instr(lower(coalesce(title, '')), ?) > 0"] * len(q.tokens)
    args: list[ScopeKey] = list(q.tokens)
    if scope == "session":
        where.append("sess = ?")
        args.append(key)
    elif scope == "project":
        where.append("project_hash = ?")
        args.append(key)
    rows = conn.execute(
        f"SELECT sess, id, title FROM sessions WHERE {' AND '.join(where)}", args
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def search(
    conn: sqlite3.Connection,
    query: str,
    *,
    scope: SearchScope,
    key: ScopeKey,
    limit: int,
) -> list[SearchHit]:
    """Ranked hits for ``query``; any input returns a list, never raises on syntax.

    Every whitespace-separated token must occur (AND, case-insensitive for ASCII).
    The newest :data:`CANDIDATES` matching messages are ranked with a BM25-like
    score (higher is better). Titles: a message in a session whose title contains
    every token gets ``TITLE_BOOST`` added; such a session with no matching message
    among the candidates still gets one hit, on its first message, whose snippet
    is the marked title. ``key`` is the session's ``sess`` for scope ``session``
    and the project hash for ``project``.
    """
    q = parse_query(query)
    if not q.tokens:
        return []
    limit = clamp_limit(limit)
    rows = _candidates(conn, q, scope, key)
    if q.unchecked:
        rows = [r for r in rows if matches_all(r[5], q.unchecked)]
    titles = _title_sessions(conn, q, scope, key)
    avg = sum(len(r[5]) for r in rows) / len(rows) if rows else 1.0
    prepared = needles(q.tokens)
    # (score, rowid, sess, msg_seq, message id, role, created_at, text to snippet)
    scored: list[tuple[float, int, int, int, str, str, str, str]] = [
        (score(r[5], prepared, avg) + (TITLE_BOOST if r[1] in titles else 0.0),
         r[0], r[1], r[2], r[3], r[4], r[6], r[5])
        for r in rows
    ]  # fmt: skip
    hit_sessions = {r[1] for r in rows}
    # Sessions found by their title alone: a hit on their first message, all scored
    # TITLE_BOOST, so only the newest ``limit`` of them can be returned.
    lonely = [sess for sess in titles if sess not in hit_sessions]
    for at in range(0, len(lonely), TITLES_PER_QUERY):
        part = lonely[at : at + TITLES_PER_QUERY]
        scored += [
            (TITLE_BOOST, rid, sess, seq, mid, role, created, titles[sess][1] or "")
            for sess, rid, seq, mid, role, created in conn.execute(
                "SELECT sess, rid, msg_seq, id, role, created_at FROM messages "
                f"WHERE sess IN ({','.join('?' * len(part))}) AND msg_seq = 1 "
                "ORDER BY rid DESC LIMIT ?", (*part, limit))
        ]  # fmt: skip
    scored.sort(key=lambda x: (-x[0], -x[1]))
    top = scored[:limit]
    info = dict(titles)  # the sessions' ids and titles, of the hits returned only
    missing = list({hit[2] for hit in top} - info.keys())
    if missing:
        marks = ",".join("?" * len(missing))
        info.update(
            (s, (i, t))
            for s, i, t in conn.execute(
                f"SELECT sess, id, title FROM sessions WHERE sess IN ({marks})", missing
            )
        )
    # Snippets only for what is returned: they are the costly part per hit.
    return [
        SearchHit(
            info[sess][0],
            info[sess][1],
            mid,
            seq,
            role,
            snippet(text, q.tokens, fold=prepared.fold),
            round(s, 4),
            created,
        )  # fmt: skip
        for s, _, sess, seq, mid, role, created, text in top
    ]
