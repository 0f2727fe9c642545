"""``mttui`` on a disk that fills up: from the N-th durable write on, every write fails.

Run as a script it is ``mttui`` with ``MTTUI_ENOSPC_AT=N``: the N-th durable write
of the process (a session-log append, a checkpoint put or a put of pending writes;
counted from 1) and every one after it fail as on a full disk — a log append
writes part of its line and then gets ``ENOSPC`` (a short write), SQLite raises
``database or disk is full``. Index updates after a log append fail as well once
the disk is full. ``MTTUI_ENOSPC_TRACE`` names a file that lists every durable
write (``<n> <what>``), to learn how many a turn has.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from tests.support.fake_openai import FakeOpenAI

HERE = os.path.dirname(os.path.abspath(__file__))
FULL = "database or disk is full"


class _Disk:
    def __init__(self, full_at: int, trace: str, only: bool) -> None:
        self.n = 0
        self.full_at = full_at
        self.trace = trace
        self.only = only  # only that one write fails (a little space came back after it)

    @property
    def full(self) -> bool:
        if self.only:
            return self.full_at == self.n + 1
        return 0 < self.full_at <= self.n + 1

    def write(self, what: str) -> bool:
        """Count one durable write; whether it fails."""
        fails = self.full
        self.n += 1
        if self.trace:
            with open(self.trace, "a", encoding="utf-8") as f:
                f.write(f"{self.n} {what}{' ENOSPC' if fails else ''}\n")
        return fails


def arm(full_at: int, trace: str = "", only: bool = False) -> Callable[[], None]:
    """Install the full disk (in this process); returns what takes it away again."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    import mttui.session.log as log_module
    from mttui.session import service
    from mttui.session.log import SessionLog

    disk = _Disk(full_at, trace, only)
    append_many, put, put_writes = SessionLog.append_many, SqliteSaver.put, SqliteSaver.put_writes
    real_os = log_module.os

    class _FullOs:
        """``os`` for the log module: writes are cut short once the disk is full."""

        def __getattr__(self, name: str) -> Any:
            return getattr(real_os, name)

        @staticmethod
        def write(fd: int, data: bytes) -> int:
            if disk.full:
                if len(data) > 1:
                    real_os.write(fd, data[: len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_os.write(fd, data)

    def logged(self: SessionLog, items: Any) -> Any:
        items = list(items)
        what = "log " + ",".join(t for t, _ in items)
        if disk.write(what):
            log_module.os = _FullOs()  # type: ignore[assignment]
            try:
                return append_many(self, items)
            finally:
                log_module.os = real_os
        return append_many(self, items)

    def put_checkpoint(
        self: Any, config: Any, checkpoint: Any, metadata: Any, versions: Any
    ) -> Any:
        if disk.write(f"checkpoint {(metadata or {}).get('source')}"):
            raise sqlite3.OperationalError(FULL)
        return put(self, config, checkpoint, metadata, versions)

    def put_pending(self: Any, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if disk.write("writes " + ",".join(str(c) for c, _ in writes)):
            raise sqlite3.OperationalError(FULL)
        put_writes(self, config, writes, task_id, task_path)

    ingest_file = service.ingest_file

    def indexed(*args: Any, **kwargs: Any) -> Any:
        if disk.full:
            raise sqlite3.OperationalError(FULL)
        return ingest_file(*args, **kwargs)

    service.ingest_file = indexed  # type: ignore[assignment]

    SessionLog.append_many = logged  # type: ignore[method-assign]
    SqliteSaver.put = put_checkpoint  # type: ignore[method-assign]
    SqliteSaver.put_writes = put_pending  # type: ignore[method-assign]

    def disarm() -> None:
        SessionLog.append_many = append_many  # type: ignore[method-assign]
        SqliteSaver.put, SqliteSaver.put_writes = put, put_writes  # type: ignore[method-assign]
        service.ingest_file = ingest_file  # type: ignore[assignment]
        log_module.os = real_os

    return disarm


# -- in-process use by the tests -------------------------------------------------

class Exec:
    def __init__(self, capsys: pytest.CaptureFixture[str], project: Path) -> None:
        self.capsys, self.project = capsys, project

    def __call__(self, *args: str, full_at: int = 0, only: bool = False,
                 trace: str = "") -> tuple[int, list[dict[str, Any]], str]:
        self.capsys.readouterr()
        from mttui.cli import main

        disarm = arm(full_at, trace, only)
        try:
            code = main(["exec", "--json", "--project", str(self.project), *args])
        finally:
            disarm()
        out, err = self.capsys.readouterr()
        return code, [json.loads(x) for x in out.splitlines() if x.strip()], err


def exec_here(home: Path, project: Path, fake_openai: FakeOpenAI,
               capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Exec:
    """``mttui exec`` run in this process against the scripted server."""
    for var in ("OPENAI_API_KEY", "MTTUI_PROVIDER", "MTTUI_MODEL", "MTTUI_APPROVAL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MTTUI_CONFIG", str(home.parent / "none.toml"))
    monkeypatch.setenv("MTTUI_MAX_RETRIES", "0")
    monkeypatch.chdir(project)
    return Exec(capsys, project)



if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    from mttui.cli import main

    arm(int(os.environ.get("MTTUI_ENOSPC_AT") or 0), os.environ.get("MTTUI_ENOSPC_TRACE", ""),
        only=os.environ.get("MTTUI_ENOSPC_ONLY") == "1")
    sys.exit(main(sys.argv[1:]))
