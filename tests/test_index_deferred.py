"""A run's records reach the index once the run has ended (``index_deferred``), not
after each append: the log is fsynced as always, readers of the session catch up from
the file first, and after a kill before the catch-up the next process's catch-up
gives the index a rebuild gives."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from mttui.session.service import SessionService
from tests.support.resume import index_equals_rebuild


def _indexed_bytes(service: SessionService, session_id: str) -> int:
    conn = sqlite3.connect(f"file:{service.layout.index_path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT byte_offset FROM sessions WHERE id = ?",
                           (session_id,)).fetchone()  # fmt: skip
        return int(row[0])
    finally:
        conn.close()


def _message(i: int) -> dict[str, object]:
    return {"id": f"msg-{i}", "role": "assistant", "content": f"step {i} 缓存", "status": "sent"}


def test_the_index_catches_up_once_at_the_end(service: SessionService, tmp_path: Path) -> None:
    writer = service.create_session(provider="offline", model="m")
    writer.append("run_start", run_id="run-1")
    before = _indexed_bytes(service, writer.session_id)
    assert before == writer.path.stat().st_size  # an append outside: indexed at once
    with writer.index_deferred():
        for i in range(5):
            writer.append("transcript_message", message=_message(i))
        assert _indexed_bytes(service, writer.session_id) == before  # left behind
        assert writer.totals() is not None  # a reader of the session catches up first
        writer.append("run_end", run_id="run-1", status="completed")
    assert _indexed_bytes(service, writer.session_id) == writer.path.stat().st_size
    writer.close()
    index_equals_rebuild(service.layout.home, tmp_path)


def test_nested_deferrals_catch_up_at_the_outer_end(service: SessionService) -> None:
    writer = service.create_session(provider="offline", model="m")
    size = writer.path.stat().st_size
    with writer.index_deferred():
        with writer.index_deferred():
            writer.append("transcript_message", message=_message(1))
        assert _indexed_bytes(service, writer.session_id) == size
    assert _indexed_bytes(service, writer.session_id) == writer.path.stat().st_size
    writer.close()


KILLED = """
import os, signal, sys
from pathlib import Path
from mttui.session.service import SessionService
service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
writer = service.create_session(provider="offline", model="m")
print(writer.session_id, flush=True)
with writer.index_deferred():
    for i in range(20):
        writer.append("transcript_message", message={
            "id": f"msg-{i}", "role": "user", "content": f"words {i} 缓存", "status": "sent"})
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_kill_before_the_catch_up_loses_nothing(home: Path, project: Path,
                                                  tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLED, str(home), str(project)],
                          capture_output=True, text=True, env={**os.environ},
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    session_id = proc.stdout.split()[0]
    service = SessionService(home, project)
    log = next(home.glob(f"history/*/session-*-{session_id}.jsonl"))
    assert _indexed_bytes(service, session_id) < log.stat().st_size  # the kill left it behind
    service.catch_up()
    assert _indexed_bytes(service, session_id) == log.stat().st_size
    hits = service.search("words 19")
    assert any(h.session_id == session_id for h in hits)
    service.close()
    index_equals_rebuild(home, tmp_path)
