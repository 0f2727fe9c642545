"""The logical content of an index database, for comparing an index with a rebuild."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from mttui.session.index import owed, shards


def logical_dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows with the surrogate key ``sess`` replaced by the session id
    (FTS rows a fork still owes are written first)."""
    conn = sqlite3.connect(db)
    shards.register(conn)  # the views give each text through shards.fts_text
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions)") if r[1] != "sess"]
        out["sessions"] = sorted(conn.execute(f"SELECT {', '.join(cols)} FROM sessions"))
        for table in ("messages", "approvals", "open_tools", "pending", "threads", "markers"):
            tcols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            keep = [f"t.{c}" for c in tcols if c not in ("sess", "rid")]
            out[table] = sorted(
                conn.execute(
                    f"SELECT s.id, {', '.join(keep)} FROM {table} t JOIN sessions s USING (sess)"
                ),
                key=lambda r: json.dumps(r, default=str),
            )
        conn.isolation_level = None
        owed.pay(conn)  # FTS rows a fast fork still owes: the index is whole once paid
        shards.integrity_check(conn)
        out["fts_rows"] = [(shards.row_count(conn),)]
        # CJK pairs by (session, message seq): no orphan rows, none missing
        out["cjk_grams"] = sorted(conn.execute(
            "SELECT s.id, m.msg_seq, g.gram FROM cjk_grams g LEFT JOIN messages m USING (rid) "
            "LEFT JOIN sessions s USING (sess)"), key=lambda r: json.dumps(r))  # fmt: skip
        return out
    finally:
        conn.close()
