"""The first send on a long session reads the log from its last compression on: opening
it, resuming it and sending a message until the request reaches the model read nothing
of the history before (its first line and what the index points at aside), so the cost
is flat in history length (B17). Counted as the bytes of the log file read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mttui.config import Settings
from mttui.core.drive import send
from mttui.core.handle import SessionHandle
from mttui.session.reader import read_all
from mttui.session.service import SessionService
from tests.support import fake_openai as fo
from tests.support.log_reads import bytes_in, reads_of
from tests.support.long_session import LongSession, write_long_session

EVERY = 200
SLACK = 1 << 16  # a backward read takes 64 KiB chunks: the last may start before the tail
HEAD = 1 << 12  # the first line (session_start)


def _settings(server: fo.FakeOpenAI) -> Settings:
    return Settings(provider="openai", model="bench", base_url=server.url, api_key="k",
                    approval="ask", max_retries=0)  # fmt: skip


def _first_send(home: Path, project: Path, long: LongSession,
                server: fo.FakeOpenAI) -> list[tuple[int, int]]:
    with reads_of(long.path) as reads:
        handle = SessionHandle.open(SessionService(home, project), _settings(server), long.sid)
        try:
            outcome = send(handle, "and now?", emit=lambda _: None, ask=lambda _: None)
        finally:
            handle.close()
    assert outcome.status == "completed"
    return list(reads)


def _past(long: LongSession) -> tuple[int, int]:
    return HEAD, long.kept_start - SLACK


def _seen_by_model(server: fo.FakeOpenAI) -> list[str]:
    return [str(m.get("content")) for m in server.requests[-1]["messages"]]


def test_a_session_without_runs_is_not_read_before_its_last_compression(
        home: Path, project: Path, fake_openai: fo.FakeOpenAI) -> None:
    service = SessionService(home, project)
    long = write_long_session(service, "a1b2c3d4e5f6", 20 * EVERY + 60, every=EVERY,
                              runs=False)  # fmt: skip
    assert long.kept_start - SLACK > 1 << 20  # megabytes of history before the tail
    reads = _first_send(home, project, long, fake_openai)
    assert bytes_in(reads, *_past(long)) == 0
    seen = _seen_by_model(fake_openai)
    assert any(s.endswith(f"summary up to {20 * EVERY}") for s in seen)
    assert seen[-1] == "and now?" and len(seen) == 1 + 1 + 10 + 60 + 1  # system, summary…
    records, _ = read_all(long.path)
    assert [r["type"] for r in records if r["type"] == "run_end"] == ["run_end"]  # ours only


def test_a_session_with_runs_is_not_read_before_its_last_compression(
        home: Path, project: Path, fake_openai: fo.FakeOpenAI) -> None:
    service = SessionService(home, project)
    long = write_long_session(service, "b1b2c3d4e5f6", 20 * EVERY + 60, every=EVERY)
    reads = _first_send(home, project, long, fake_openai)
    assert bytes_in(reads, *_past(long)) == 0
    assert _seen_by_model(fake_openai)[-1] == "and now?"


def _run_ends(path: Path) -> list[tuple[str, str]]:
    records, _ = read_all(path)
    return [(str(r.get("run_id")), str(r.get("status"))) for r in records
            if r["type"] == "run_end"]


def test_a_run_that_began_before_the_last_compression_is_closed_after_a_crash(
        home: Path, project: Path, fake_openai: fo.FakeOpenAI) -> None:
    # the last compression happened inside a run (auto), then the process died
    service = SessionService(home, project)
    n = 20 * EVERY
    long = write_long_session(service, "c1b2c3d4e5f6", n + 1, every=EVERY, ended=False)
    assert long.compression > long.kept_start
    reads = _first_send(home, project, long, fake_openai)
    assert bytes_in(reads, *_past(long)) == 0
    assert (f"run-{n}", "interrupted") in _run_ends(long.path)
    assert _seen_by_model(fake_openai)[-1] == "and now?"


def test_an_index_behind_a_crashed_run_catches_up_from_the_new_bytes_only(
        home: Path, project: Path, fake_openai: fo.FakeOpenAI) -> None:
    # a run was killed before the index caught up with it (its updates are deferred)
    service = SessionService(home, project)
    long = write_long_session(service, "d1b2c3d4e5f6", 20 * EVERY + 60, every=EVERY)
    with open(long.path, "ab") as fh:
        fh.write(b'{"type":"run_start","seq":99001,"timestamp":"2026-01-01T00:00:01.000Z",'
                 b'"session_id":"d1b2c3d4e5f6","run_id":"run-late"}\n'
                 b'{"type":"transcript_message","seq":99002,"timestamp":'
                 b'"2026-01-01T00:00:01.000Z","session_id":"d1b2c3d4e5f6","message":'
                 b'{"id":"m-late","role":"user","content":"late words","status":"sent"}}\n')
    reads = _first_send(home, project, long, fake_openai)
    assert bytes_in(reads, *_past(long)) == 0
    assert ("run-late", "interrupted") in _run_ends(long.path)
    seen = _seen_by_model(fake_openai)
    assert seen[-2:] == ["late words", "and now?"]  # the log's message joins the thread


def test_the_open_run_found_from_the_tail_is_the_whole_logs(home: Path, project: Path) -> None:
    from mttui.session.index.schema import open_index
    from mttui.session.resume.facts import index_facts, read_facts
    from mttui.session.resume.lookup import bare_info

    service = SessionService(home, project)
    shapes = {"e00000000001": dict(runs=False), "e00000000002": dict(runs=True),
              "e00000000003": dict(runs=True, ended=False, n=81),  # began before it
              "e00000000004": dict(runs=True, ended=False, n=87)}  # began after it
    found = {}
    for sid, shape in shapes.items():
        n = int(shape.pop("n", 90))
        long = write_long_session(service, sid, n, every=20, **shape)
        conn = open_index(service.layout)
        assert conn is not None
        fast = index_facts(conn, bare_info(sid, long.path))
        conn.close()
        assert fast is not None and fast.source == "index"
        full = read_facts(long.path, sid, service.project_hash)
        found[sid] = fast.open_run
        assert fast.open_run == full.open_run
    assert found == {"e00000000001": None, "e00000000002": None,
                     "e00000000003": "run-80", "e00000000004": "run-86"}


def test_the_first_send_loads_the_threads_checkpoint_twice(
        home: Path, project: Path, fake_openai: fo.FakeOpenAI,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # each load decodes the whole view since the last compression: the resume plans with
    # one, the run starts from the other (the apply step reuses the plan's)
    from langgraph.checkpoint.sqlite import SqliteSaver

    service = SessionService(home, project)
    long = write_long_session(service, "f1b2c3d4e5f6", 2 * EVERY + 60, every=EVERY)
    loads: list[str] = []
    real = SqliteSaver.get_tuple

    def counted(self: SqliteSaver, config: Any) -> Any:
        loads.append(str(config["configurable"].get("thread_id")))
        return real(self, config)

    monkeypatch.setattr(SqliteSaver, "get_tuple", counted)
    _first_send(home, project, long, fake_openai)
    assert loads == ["thread-f1b2c3d4e5f6"] * 2
    assert _seen_by_model(fake_openai)[-1] == "and now?"


def test_a_log_without_its_session_start_is_still_refused_before_anything_is_written(
        home: Path, project: Path) -> None:
    from mttui.graph.resume.apply import ResumeRefused
    from mttui.session.paths import ensure_dir

    service = SessionService(home, project)
    folder = ensure_dir(service.layout.project_dir(service.project_hash))
    path = folder / "session-20260101-000000-0a0b0c0d0e0f.jsonl"
    path.write_bytes(b"not a record\n" + b'{"type":"transcript_message","seq":2,"timestamp":'
                     b'"2026-01-01T00:00:00.000Z","session_id":"0a0b0c0d0e0f","message":'
                     b'{"id":"m1","role":"user","content":"hi","status":"sent"}}\n')
    before = path.read_bytes()
    with pytest.raises(ResumeRefused) as refused:
        SessionHandle.open(service, Settings(provider="offline"), "0a0b0c0d0e0f")
    assert refused.value.code == "session_empty"
    assert path.read_bytes() == before
