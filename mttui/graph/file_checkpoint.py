"""The file snapshot of a turn: taken before the first side effect after a user message.

The journal calls :meth:`FileCheckpointer.before_dispatch` before it writes a
``tool_dispatch``. The first call that is not low risk after a user message (the
last user message of the model's view: a typed prompt, a queued input, a steer)
snapshots the project (shadow git, ``session/snapshots``) and appends
``file_checkpoint`` naming that message (fsynced) — so the record is on disk before
that call's ``tool_dispatch``. A snapshot that fails is recorded too (``ref`` null,
``error``): a code rewind to that turn is refused with the reason instead of being
served by a later snapshot. A run that only reads takes no snapshot. Without
``git`` the user is told once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mttui.session.snapshots import GitError, ShadowRepo, git_available
from mttui.session.turn_positions import TurnPositions
from mttui.session.writer import SessionWriter

from .events import Emit, Notice
from .tools import risk_of

NO_GIT = ("file checkpoints are off: no `git` executable was found "
          "(conversation rewind and fork still work)")

# the journal's hook: (emit, run_id, tool_name, id of the turn's user message or "")
BeforeDispatch = Callable[[Emit, str, str, str], None]


class FileCheckpointer:
    """Snapshots the project once per user message, before its turn's first side effect."""

    def __init__(self, writer: SessionWriter, project: Path, home: Path) -> None:
        self.writer = writer
        self.repo = ShadowRepo(home, project)
        self.done: set[str] = set()  # keys (user message ids, else runs) with a snapshot
        self.told = False
        self._positions = TurnPositions(writer.path)

    def before_dispatch(self, emit: Emit, run_id: str, tool_name: str,
                        message_id: str = "") -> None:
        if risk_of(tool_name) == "low":
            return
        key = message_id or f"run:{run_id}"
        if key in self.done:
            return
        self._scan()
        if key in self.done:
            return  # taken by an earlier process (a turn continued after a restart)
        self.done.add(key)
        if not git_available():
            if not self.told:
                self.told = True
                emit(Notice("warning", NO_GIT))
            return
        seq = (self._positions.seq_of(message_id) if message_id else None) \
            or self._positions.count
        try:
            snap = self.repo.snapshot(f"before message {seq} (run {run_id})")
        except (GitError, OSError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.writer.append("file_checkpoint", run_id=run_id, before_seq=seq, ref=None,
                               files=0, skipped=[], message_id=message_id, error=reason)
            emit(Notice("warning", f"no file snapshot for this turn ({reason}); a code "
                                   "rewind to it will be refused"))
            return
        self.writer.append("file_checkpoint", run_id=run_id, before_seq=seq, ref=snap.ref,
                           files=snap.files, skipped=snap.skipped, message_id=message_id)

    def _scan(self) -> None:
        """Read the log's new lines: message positions and the snapshots already taken."""
        self._positions.follow(also=(b'"type":"file_checkpoint"',))
        for rec in self._positions.records:
            mid = rec.get("message_id")
            self.done.add(mid if isinstance(mid, str) and mid else f"run:{rec.get('run_id')}")


def file_checkpoints(writer: SessionWriter, project: Path, checkpoints_path: Path
                     ) -> FileCheckpointer:
    """The file checkpointer of a session whose checkpoint db is ``checkpoints_path``
    (``$MTTUI_HOME/history/<hash>/checkpoints.sqlite``): its ``before_dispatch`` is the
    journal's hook, its repository's ``tool_running`` the journal's activity guard."""
    home = Path(checkpoints_path).parent.parent.parent
    return FileCheckpointer(writer, project, home)
