"""The file checkpoint of a run: a snapshot before its first side-effecting call.

The journal calls :meth:`FileCheckpointer.before_dispatch` before it writes a
``tool_dispatch``; the first call of a run that is not low risk snapshots the
project (shadow git, ``session/snapshots``) and appends ``file_checkpoint``
(fsynced) — so the record is on disk before that call's ``tool_dispatch``.
A run that only reads takes no snapshot. Without ``git`` the user is told once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mttui.session.reader import iter_lines, parse_line
from mttui.session.snapshots import GitError, ShadowRepo, git_available
from mttui.session.writer import SessionWriter

from .events import Emit, Notice
from .tools import risk_of

NO_GIT = ("file checkpoints are off: no `git` executable was found "
          "(conversation rewind and fork still work)")


class FileCheckpointer:
    """Snapshots the project once per run, before its first side effect."""

    def __init__(self, writer: SessionWriter, project: Path, home: Path) -> None:
        self.writer = writer
        self.repo = ShadowRepo(home, project)
        self.done: set[str] = set()  # runs with a checkpoint already (this log)
        self.told = False
        self._offset = 0
        self._messages = 0
        self._awaiting: str | None = None
        self._users: dict[str, tuple[int, str]] = {}  # run_id -> (message seq, message id)

    def before_dispatch(self, emit: Emit, run_id: str, tool_name: str) -> None:
        if risk_of(tool_name) == "low" or run_id in self.done:
            return
        self._scan()
        if run_id in self.done:
            return  # taken by an earlier process (a run continued after a restart)
        self.done.add(run_id)
        if not git_available():
            if not self.told:
                self.told = True
                emit(Notice("warning", NO_GIT))
            return
        try:
            snap = self.repo.snapshot(f"before run {run_id}")
        except (GitError, OSError) as exc:
            emit(Notice("warning", f"no file checkpoint for this run: {exc}"))
            return
        seq, message_id = self._users.get(run_id, (self._messages, ""))
        self.writer.append("file_checkpoint", run_id=run_id, before_seq=seq, ref=snap.ref,
                           files=snap.files, skipped=snap.skipped, message_id=message_id)

    def _scan(self) -> None:
        """Read the log's new lines: message positions, runs and their checkpoints."""
        path = self.writer.path
        for offset, raw, complete in iter_lines(path, self._offset):
            if not complete:
                break
            self._offset = offset + len(raw) + 1
            head = raw[:80]
            if b'"type":"transcript_message"' in head:
                self._messages += 1
                if self._awaiting and b'"role":"user"' in raw:
                    self._users[self._awaiting] = (self._messages, _message_id(raw))
                    self._awaiting = None
            elif b'"type":"run_start"' in head:
                rec = parse_line(raw)  # checked: a torn or poisoned line is None
                if rec is not None and not rec.get("continues"):
                    self._awaiting = str(rec.get("run_id") or "")
            elif b'"type":"file_checkpoint"' in head:
                rec = parse_line(raw)
                if rec is not None:
                    self.done.add(str(rec.get("run_id") or ""))


def _message_id(raw: bytes) -> str:
    rec = parse_line(raw)
    message = rec.get("message") if rec is not None else None
    return str(message.get("id") or "") if isinstance(message, dict) else ""


def file_checkpoints(writer: SessionWriter, project: Path, checkpoints_path: Path
                     ) -> Callable[[Emit, str, str], None]:
    """The journal's ``before_dispatch`` hook for a session whose checkpoint db is
    ``checkpoints_path`` (``$MTTUI_HOME/history/<hash>/checkpoints.sqlite``)."""
    home = Path(checkpoints_path).parent.parent.parent
    return FileCheckpointer(writer, project, home).before_dispatch
