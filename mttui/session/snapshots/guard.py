"""What keeps a code rewind from destroying data it does not own.

- A rewind never runs while another session of the project runs a tool: each
  side-effecting tool holds a shared lock on the project's ``tools.lock`` (beside its
  shadow repository, outside the project) from before its snapshot to its outcome;
  a rewind takes it exclusively, without waiting, or is refused.
- A rewind never deletes or overwrites the file its own output goes to (``mttui
  rewind … > out.json`` inside the project): the files open on its standard streams.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import MttuiError
from ..paths import ensure_dir


class ToolsRunning(MttuiError):
    """Another session of the project is running a tool (a rewind would race it)."""


def tools_lock_path(git_dir: Path) -> Path:
    return git_dir.parent / f"{git_dir.name}.tools.lock"


@contextmanager
def tool_running(git_dir: Path) -> Iterator[None]:
    """Held by a side-effecting tool while it may change the project (shared: several
    sessions may run tools at once; a rewind waits for none of them, it is refused)."""
    path = tools_lock_path(git_dir)
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


@contextmanager
def tools_quiet(git_dir: Path) -> Iterator[None]:
    """Held by a code rewind: no tool of any session of the project runs meanwhile."""
    path = tools_lock_path(git_dir)
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ToolsRunning("another session of this project is running a tool; rewind "
                               "the files once it has finished") from None
        yield
    finally:
        os.close(fd)


def own_outputs() -> frozenset[tuple[int, int]]:
    """``(st_dev, st_ino)`` of the regular files on this process's standard streams."""
    out = set()
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.add((st.st_dev, st.st_ino))
    return frozenset(out)


def is_protected(path: Path, protect: frozenset[tuple[int, int]]) -> bool:
    if not protect:
        return False
    try:
        st = path.lstat()
    except OSError:
        return False
    return (st.st_dev, st.st_ino) in protect
