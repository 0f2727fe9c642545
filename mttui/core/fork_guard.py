"""A fork either completes, or is removed, or is left marked incomplete (never a partial
session listed like a real one; session/fork_state.py).

- :func:`guarded` wraps the copy and the seed: at the end it appends (fsynced) the
  ``session_update {fork_state: done}`` that makes the fork complete; on a failure
  (a full disk, any error, Ctrl-C) it removes what was made and raises
  :class:`ForkFailed`, which names the partial session if it could not be removed.
  A kill leaves the log without the mark: incomplete.
- :func:`finish` makes an incomplete fork again from its source (same point, same
  title) and deletes the incomplete one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from mttui.session import checkpoint_store
from mttui.session.disk import DISK_FULL_TEXT, disk_full
from mttui.session.errors import MttuiError, SessionLocked, SessionNotFound
from mttui.session.fork_state import FORK_DONE
from mttui.session.lock import holder_pid, lock_path_for
from mttui.session.service import SessionService
from mttui.session.writer import SessionWriter

T = TypeVar("T")


class ForkFailed(MttuiError):
    """The fork could not be made (exit 1); the message says what is left of it."""


@contextmanager
def guarded(service: SessionService, writer: SessionWriter) -> Iterator[None]:
    """The body copies and seeds; the fork is then marked complete. Any failure removes
    the partial fork (or names it) and raises :class:`ForkFailed`; Ctrl-C removes it
    too and goes on as Ctrl-C."""
    try:
        yield
        writer.append("session_update", fork_state=FORK_DONE)
    except BaseException as exc:
        removed = _discard(service, writer)
        if not isinstance(exc, Exception):
            raise
        why = DISK_FULL_TEXT if disk_full(exc) else (str(exc) or exc.__class__.__name__)
        what = ("nothing of it was kept" if removed else
                f"session {writer.session_id} is left incomplete: "
                f"`mttui delete {writer.session_id}` removes it")
        raise ForkFailed(f"fork failed: {why.splitlines()[0]}; {what}") from exc
    finally:
        writer.close()


def _discard(service: SessionService, writer: SessionWriter) -> bool:
    """Remove a failed fork: its log first (that frees the space a full disk needs for
    the rest), then its index rows and its thread's checkpoints (best effort: a catch-up
    drops the rows of a log that is gone). Whether the log is gone."""
    path, sid, thread = writer.path, writer.session_id, writer.thread_id
    try:
        path.unlink(missing_ok=True)
    except OSError:
        return False
    finally:
        writer.close()
    with contextlib.suppress(Exception):
        lock_path_for(path).unlink(missing_ok=True)
    with contextlib.suppress(Exception):
        service.delete(sid)
    if thread:
        with contextlib.suppress(Exception):
            checkpoint_store.delete_threads(
                service.layout.checkpoints_path(service.project_hash), [thread])
    return True


def finish(service: SessionService, ref: str,
           fork: Callable[[str, int, str | None], T]) -> tuple[T, str]:
    """Make the incomplete fork ``ref`` again with ``fork(source, seq, title)`` and
    delete it; the new fork and the id of the one it replaces."""
    info = service.resolve(ref)
    if not info.fork_incomplete:
        raise ForkFailed(f"session {info.id} is not an incomplete fork: nothing to finish")
    pid = holder_pid(info.path)
    if pid is not None:  # a fork still under way
        raise SessionLocked(info.path, pid)
    origin = info.forked_from() or {}
    source, seq = origin.get("session_id"), origin.get("seq")
    if not isinstance(source, str) or not isinstance(seq, int):
        raise ForkFailed(f"session {info.id} does not say what it was forked from: "
                         f"`mttui delete {info.id}` removes it")
    try:
        service.resolve(source)
    except SessionNotFound:
        raise ForkFailed(f"the source of fork {info.id} ({source}) no longer exists: "
                         f"`mttui delete {info.id}` removes it") from None
    result = fork(source, seq, info.title)
    service.delete(info.id)
    return result, info.id
