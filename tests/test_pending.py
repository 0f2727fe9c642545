"""Pending inputs without a model: the lane fold, the index projection, the migration."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mttui.core.pending import PendingInputs
from mttui.session.index.pending_rows import load_lane
from mttui.session.index.schema import MIGRATIONS
from mttui.session.pending import CAPACITY, NOT_DELIVERED, Lane, PendingError, read_lane
from mttui.session.reader import read_all
from mttui.session.service import SessionService
from mttui.session.transcript import fold


def _msg(mid: str, text: str, status: str = "sent") -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text, "status": status}


def test_queue_operations_capacity_and_order(svc: SessionService) -> None:
    with svc.create_session(provider="p", model="m") as w:
        pending = PendingInputs(w)
        items = [pending.add(f"task {n}") for n in range(CAPACITY)]
        with pytest.raises(PendingError, match="queue is full"):
            pending.add("one too many")
        pending.move(items[9].id, 1)
        pending.edit(items[0].id[:12], "task zero, edited")  # a unique prefix is enough
        pending.remove(items[5].id)
        steer = pending.steer("look at utils.py")
        with pytest.raises(PendingError, match="steer cannot be changed"):
            pending.edit(steer.id, "other")
        with pytest.raises(PendingError, match="between 1 and 9"):
            pending.move(items[1].id, 11)
        sid = w.session_id
    records, _ = read_all(svc.get(sid).path)
    assert sum(r["type"] == "pending_add" for r in records) == CAPACITY  # the 11th: nothing
    lane = read_lane(svc.get(sid).path)
    texts = [i.text for i in lane.queue()]
    assert texts[:2] == ["task 9", "task zero, edited"] and "task 5" not in texts
    assert [i.text for i in lane.unread()] == ["look at utils.py"]
    # the index projects the same lane, and the browser badge counts the queue
    info = svc.get(sid)
    assert info.status.queued == CAPACITY - 1
    conn = sqlite3.connect(svc.layout.index_path)
    sess = conn.execute("SELECT sess FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    assert load_lane(conn, sess).view() == lane.view()
    # the steer is a user message at once (unread: status pending)
    assert [m.status for m in svc.history(sid).messages] == ["pending"]


def test_take_fail_retry_and_legacy_take_without_message() -> None:
    lane = Lane.fold([
        {"type": "pending_add", "item_id": "a", "mode": "queue", "text": "A"},
        {"type": "pending_add", "item_id": "b", "mode": "queue", "text": "B"},
        {"type": "pending_add", "item_id": "c", "mode": "queue", "text": "C"},
        {"type": "pending_take", "item_id": "a", "message": _msg("m1", "A")},
        {"type": "pending_fail", "item_id": "c", "error": "no model"},
        {"type": "pending_take", "item_id": "b"},  # its user message was never written
    ])  # fmt: skip
    assert [(i.id, i.state) for i in lane.queue()] == [("b", "waiting"), ("c", "needs_retry")]
    assert lane.items["a"].state == "taken" and lane.items["a"].message_id == "m1"
    lane.apply({"type": "pending_retry", "item_id": "c"})
    lane.apply({"type": "pending_edit", "item_id": "a", "text": "too late"})  # taken: no-op
    assert lane.items["c"].state == "waiting" and lane.items["a"].text == "A"


def test_steer_read_and_undelivered() -> None:
    lane = Lane.fold([
        {"type": "pending_steer", "item_id": "s1", "text": "x", "message": _msg("m1", "x")},
        {"type": "pending_steer", "item_id": "s2", "text": "y", "message": _msg("m2", "y")},
        {"type": "pending_read", "item_ids": ["s1"], "message_ids": ["m1"]},
        {"type": "message_update", "message_id": "m2", "status": "error",
         "error": NOT_DELIVERED},
        {"type": "message_update", "message_id": "m1", "status": "error"},  # read: stays
    ])  # fmt: skip
    assert lane.items["s1"].state == "read"
    assert lane.items["s2"].state == "failed" and lane.items["s2"].error == NOT_DELIVERED


MESSAGES = st.lists(
    st.one_of(
        st.tuples(st.just("msg"), st.integers(0, 3)),
        st.tuples(st.just("steer"), st.integers(0, 3)),
        st.tuples(st.just("take"), st.integers(0, 3)),
        st.tuples(st.just("read"), st.integers(0, 3)),
        st.tuples(st.just("compression"), st.integers(0, 3)),
        st.tuples(st.just("catch_up"), st.integers(0, 3)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=MESSAGES)
def test_index_and_fold_agree_on_transcript_order(ops: list[tuple[str, int]]) -> None:
    """Steers enter the transcript where a run reads them: the index's numbering
    (with catch-ups in between) and the transcript fold give the same order."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "p").mkdir()
        writer_svc = SessionService(root / "h", root / "p")
        reader = SessionService(root / "h", root / "p")
        steers: list[str] = []
        with writer_svc.create_session(provider="p", model="m") as w:
            for n, (op, a) in enumerate(ops):
                if op == "msg":
                    w.append("transcript_message", message=_msg(f"t{n}", f"t{n}"))
                elif op == "steer":
                    steers.append(f"s{n}")
                    w.append("pending_steer", item_id=f"s{n}", mode="steer", text="s",
                             message=_msg(f"s{n}", f"s{n}", "pending"))  # fmt: skip
                elif op == "take":
                    w.append("pending_add", item_id=f"q{n}", mode="queue", text="q")
                    w.append("pending_take", item_id=f"q{n}", message=_msg(f"q{n}", "q"))
                elif op == "read":  # some read twice, some never: both are no-ops
                    batch = steers[a : a + 2]
                    w.append("pending_read", item_ids=batch, message_ids=batch)
                elif op == "compression":
                    w.append("compression", summary="s", removed_count=0, kept_count=0,
                             kept_message_ids=[])  # fmt: skip
                else:
                    reader.catch_up()
            sid, path = w.session_id, w.path
        records, _ = read_all(path)
        folded = [m["id"] for m in fold(records).messages]
        indexed = [m.id for m in reader.history(sid, limit=500).messages]
        seqs = [m.seq for m in reader.history(sid, limit=500).messages]
        assert folded == indexed and seqs == list(range(1, len(seqs) + 1))
        writer_svc.close()
        reader.close()


def test_migration_from_v2_reprojects_pending_items(svc: SessionService) -> None:
    """An index written before v3 is migrated: sessions with pending rows are read
    again from their logs, so the new projection (positions, states) holds."""
    with svc.create_session(provider="p", model="m") as w:
        pending = PendingInputs(w)
        first = pending.add("first")
        pending.add("second")
        pending.move(first.id, 2)
        sid = w.session_id
    assert svc.get(sid).status.queued == 2
    svc.close()
    index = svc.layout.index_path
    old = sqlite3.connect(index)  # back to what v2 had: no such columns, another projection
    old.execute("ALTER TABLE pending DROP COLUMN message_id")
    old.execute("ALTER TABLE pending DROP COLUMN error")
    old.execute("UPDATE pending SET position = NULL, state = 'held'")
    old.execute("PRAGMA user_version = 2")
    old.commit()
    old.close()
    again = SessionService(svc.layout.home, svc.project)
    assert again.get(sid).status.queued == 2
    conn = sqlite3.connect(index)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    rows = conn.execute("SELECT text, position, state FROM pending ORDER BY position").fetchall()
    assert rows == [("second", 1, "waiting"), ("first", 2, "waiting")]


def test_queued_edited_and_steered_texts_are_redacted(
    svc: SessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "ghp_unique-github-token-8f2e61a0d9c3"
    monkeypatch.setenv("ACME_TOKEN", key)
    with svc.create_session(provider="p", model="m") as w:
        pending = PendingInputs(w)
        item = pending.add(f"use {key}")
        pending.edit(item.id, f"use {key[::-1]}")
        pending.steer(f"and {key.encode().hex()}")
        path = w.path
    records, _ = read_all(path)
    texts = [r["text"] for r in records if r["type"].startswith("pending_")]
    assert texts == ["use [redacted:ACME_TOKEN]"] * 2 + ["and [redacted:ACME_TOKEN]"]
    assert key[:12].encode() not in path.read_bytes()
