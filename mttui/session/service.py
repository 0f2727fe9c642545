"""SessionService: the one entry point the CLI and the UI use for sessions."""

from __future__ import annotations

from pathlib import Path

from .log import SessionLog
from .paths import Layout, ensure_dir, project_hash
from .reader import first_record, read_records
from .records import new_id, new_session_id, session_filename, utc_now
from .writer import SessionWriter

APP_VERSION = "0.1.0"


class SessionService:
    """Sessions of one data home, seen from one project directory."""

    def __init__(self, home: Path, project: Path) -> None:
        self.layout = Layout(Path(home))
        self.project = Path(project).expanduser().resolve()
        self.project_hash = project_hash(self.project)

    # -- writing -------------------------------------------------------------
    def project_dir(self) -> Path:
        self.layout.ensure()
        return ensure_dir(self.layout.project_dir(self.project_hash))

    def checkpoints_path(self) -> Path:
        return self.layout.checkpoints_path(self.project_hash)

    def create_session(
        self, *, provider: str, model: str, title: str | None = None
    ) -> SessionWriter:
        """Create a new session file with its ``session_start`` and hold its lock."""
        sid = new_session_id()
        path = self.project_dir() / session_filename(sid, utc_now())
        log = SessionLog.create(path, sid)
        writer = self._writer(log, thread_id=new_id("thread"))
        writer.append(
            "session_start",
            v=1,
            thread_id=writer.thread_id,
            project=str(self.project),
            project_hash=self.project_hash,
            provider=provider,
            model=model,
            title=title,
            app_version=APP_VERSION,
        )
        return writer

    def open_session(self, path: Path) -> SessionWriter:
        """Open an existing session log for writing; raises ``SessionLocked``."""
        start = first_record(path)
        sid = (start or {}).get("session_id") or path.stem.rsplit("-", 1)[-1]
        log = SessionLog.open(path, sid)
        thread_id = (start or {}).get("thread_id")
        for _, rec in read_records(path):
            if rec.get("type") == "session_update" and rec.get("thread_id"):
                thread_id = rec["thread_id"]
        return self._writer(log, thread_id=thread_id)

    def _writer(self, log: SessionLog, *, thread_id: str | None) -> SessionWriter:
        return SessionWriter(
            log,
            thread_id=thread_id,
            project=str(self.project),
            project_hash=self.project_hash,
            on_append=self._index_file,
        )

    def _index_file(self, path: Path) -> None:
        """Bring the index up to date with one file (filled in by the index)."""
