"""Invariant: the index after any sequence of appends + catch-ups == a rebuilt index.

Two services share one home, like two processes: a writer whose appends update
the index right after the fsync, and a reader that catches up. Other operations
write the files behind both (raw appends, garbage, torn tails after a "crash",
files vanishing). The logical content of every table is compared, not rowids.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mttui.session.index.ingest import build_index
from mttui.session.log import dump_record
from mttui.session.service import SessionService
from mttui.session.writer import SessionWriter
from tests.support.index_dump import logical_dump

PENDING = ["add", "edit", "move", "remove", "steer", "take", "read", "fail", "retry", "lost"]
TEXTS = st.text(alphabet="abcXYZ 快速排序缓存\n\"'", max_size=30)

RECORD = st.one_of(
    st.tuples(st.just("msg"), st.sampled_from(["user", "assistant", "tool"]), TEXTS),
    st.tuples(st.just("update"), st.integers(0, 20), st.one_of(st.none(), TEXTS)),
    st.tuples(st.just("approval"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("tool"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("pending"), st.integers(0, 3), st.sampled_from(PENDING)),
    st.tuples(st.just("session_update"), st.sampled_from(["title", "thread_id", "model"]), TEXTS),
    st.tuples(st.just("compression"), st.just(0), st.just(0)),
    st.tuples(st.just("run_end"), st.integers(0, 500),
              st.one_of(st.none(), st.floats(0, 1, allow_nan=False), st.just("bad"))),
    st.tuples(st.just("session_clear"), st.integers(0, 3), st.none()),
    st.tuples(st.just("chosen_model"), st.sampled_from(["m1", "m2"]), st.booleans()),
    st.tuples(st.just("resumed"), st.sampled_from(["execution", "reasoning"]), st.booleans()),
    st.tuples(st.just("rewind"), st.integers(0, 5), st.booleans()),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("new"), st.integers(0, 2), st.none()),
        st.tuples(st.just("append"), st.integers(0, 2), RECORD),
        st.tuples(st.just("raw"), st.integers(0, 2), RECORD),
        st.tuples(st.just("garbage"), st.integers(0, 2), st.none()),
        st.tuples(st.just("torn"), st.integers(0, 2), st.booleans()),
        st.tuples(st.just("close"), st.integers(0, 2), st.none()),
        st.tuples(st.just("vanish"), st.integers(0, 2), st.none()),
        st.tuples(st.just("catch_up"), st.just(0), st.none()),
    ),
    max_size=30,
)


def _fields(spec: tuple[Any, ...], n: int) -> tuple[str, dict[str, Any]]:
    kind, a, b = spec
    if kind == "msg":
        return "transcript_message", {"message": {"id": f"m{n}", "role": a, "content": b}}
    if kind == "update":
        fields: dict[str, Any] = {"message_id": f"m{a}", "status": "error"}
        if b is not None:
            fields["content"] = b
        return "message_update", fields
    if kind == "approval":
        if b:
            return "approval_decision", {"request_id": f"r{a}", "decisions": {"c": "approve"}}
        return "approval_request", {"request_id": f"r{a}", "run_id": "x", "tool_calls": []}
    if kind == "tool":
        if b:
            return "tool_outcome", {"run_id": "x", "call_id": f"c{a}", "status": "success"}
        return "tool_dispatch", {"run_id": "x", "call_id": f"c{a}", "tool_name": "shell"}
    if kind == "pending":
        return _pending(b, a, n)
    if kind == "session_update":
        return "session_update", {a: b or "x"}
    if kind == "run_end":
        usage = {"input_tokens": a, "output_tokens": a // 3, "cost_usd": b}
        return "run_end", {"run_id": "x", "status": "completed", "usage": usage}
    if kind == "session_clear":
        return "session_clear", {"thread_id": f"t{a}"}
    if kind == "resumed":  # a marker only with warnings
        return "session_resumed", {"mode": a, "warnings": ["tool_interrupted"] if b else []}
    if kind == "rewind":
        return "rewind", {"to_seq": a, "thread_id": f"t{a}", **({"undo": True} if b else {})}
    if kind == "chosen_model":
        return "session_update", {"model": a, **({"chosen": True} if b else {})}
    return "compression", {"summary": "s", "removed_count": 1, "kept_count": 1}


def _pending(kind: str, a: int, n: int) -> tuple[str, dict[str, Any]]:
    """Pending-input records (session/pending.py), several items sharing ids on purpose."""
    item, other = f"p{a}", f"p{(a + 1) % 4}"
    if kind == "add":
        return "pending_add", {"item_id": item, "mode": "queue", "text": f"later {n}"}
    if kind == "edit":
        return "pending_edit", {"item_id": item, "text": f"edited {n}"}
    if kind == "move":
        return "pending_move", {"item_id": item, "position": n % 4}
    if kind == "steer":
        msg = {"id": f"s{a}", "role": "user", "content": f"now {n}", "status": "pending"}
        return "pending_steer", {"item_id": item, "mode": "steer", "text": f"now {n}",
                                 "message": msg}
    if kind == "take":
        msg = {"id": f"q{n}", "role": "user", "content": "later", "status": "sent"}
        return "pending_take", {"item_id": item, "run_id": "x", "message": msg}
    if kind == "read":
        return "pending_read", {"item_ids": [item, other], "run_id": "x",
                                "message_ids": [f"s{a}", f"s{(a + 1) % 4}"]}
    if kind == "lost":
        return "message_update", {"message_id": f"s{a}", "status": "error", "error": "lost"}
    return f"pending_{kind}", {"item_id": item, "error": "boom"}  # remove, fail, retry


class World:
    def __init__(self, root: Path) -> None:
        project = root / "project"
        project.mkdir()
        self.writer_svc = SessionService(root / "home", project)
        self.reader_svc = SessionService(root / "home", project)
        self.paths: list[Path] = []
        self.writers: dict[Path, SessionWriter] = {}
        self.n = 0

    def _writer(self, path: Path) -> SessionWriter:
        if path not in self.writers:
            self.writers[path] = self.writer_svc.open_session(path)
        return self.writers[path]

    def _close(self, path: Path) -> None:
        writer = self.writers.pop(path, None)
        if writer is not None:
            writer.close()

    def run(self, op: str, i: int, arg: Any) -> None:
        self.n += 1
        if op == "new" or (not self.paths and op != "catch_up"):
            writer = self.writer_svc.create_session(provider="p", model="m")
            self.paths.append(writer.path)
            self.writers[writer.path] = writer
            return
        if op == "catch_up":
            self.reader_svc.catch_up()
            return
        path = self.paths[i % len(self.paths)]
        if not path.exists():
            return
        if op == "append":
            type_, fields = _fields(arg, self.n)
            self._writer(path).append(type_, **fields)
        elif op == "raw":
            type_, fields = _fields(arg, self.n)
            rec = {"type": type_, "seq": 1000 + self.n, "timestamp": "2026-01-01T00:00:00.000Z",
                   "session_id": "x", **fields}  # fmt: skip
            with open(path, "ab") as fh:
                fh.write(dump_record(rec))
        elif op == "garbage":
            with open(path, "ab") as fh:
                fh.write(b"\xff not json\n")
        elif op == "torn":
            self._close(path)  # a torn tail is what a crashed writer leaves
            line = dump_record({"type": "run_start", "seq": 999, "run_id": "t"})
            with open(path, "ab") as fh:
                fh.write(line[:-1] if arg else line[: len(line) // 2])
        elif op == "close":
            self._close(path)
        elif op == "vanish":
            self._close(path)
            path.unlink()

    def finish(self) -> None:
        for path in list(self.writers):
            self._close(path)
        self.reader_svc.catch_up()


_TORN_THEN_REOPEN = [("new", 0, None), ("torn", 0, None), ("catch_up", 0, None),
                    ("append", 0, ("msg", "user", "hi")), ("catch_up", 0, None)]  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
@example(ops=[(o, i, False if o == "torn" else a) for o, i, a in _TORN_THEN_REOPEN])
@example(ops=[(o, i, True if o == "torn" else a) for o, i, a in _TORN_THEN_REOPEN])
@example(ops=[("new", 0, None), ("append", 0, ("msg", "user", "abcd")),
              ("append", 0, ("update", 2, "XYZ 快速排序"))])  # fmt: skip
def test_incremental_index_equals_rebuild(ops: list[tuple[str, int, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        for op in ops:
            world.run(*op)
        world.finish()
        layout = world.reader_svc.layout
        world.reader_svc.close()
        world.writer_svc.close()
        rebuilt = Path(tmp) / "rebuilt.sqlite"
        build_index(layout, rebuilt)
        assert logical_dump(layout.index_path) == logical_dump(rebuilt)


def test_dump_sees_a_difference(tmp_path: Path) -> None:
    """The comparison itself can fail: a message edited behind the index shows up."""
    world = World(tmp_path)
    world.run("new", 0, None)
    world.run("append", 0, ("msg", "user", "hello there"))
    world.finish()
    layout = world.reader_svc.layout
    world.reader_svc.close()
    world.writer_svc.close()
    rebuilt = tmp_path / "rebuilt.sqlite"
    build_index(layout, rebuilt)
    conn = sqlite3.connect(layout.index_path)
    conn.execute("UPDATE messages SET status = 'error'")
    conn.commit()
    conn.close()
    assert logical_dump(layout.index_path) != logical_dump(rebuilt)
