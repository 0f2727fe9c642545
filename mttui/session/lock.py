"""One writer per session: an exclusive, non-blocking flock on a sibling lock file."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path

from .paths import FILE_MODE


class SessionLocked(Exception):
    """Another process (or another handle in this one) writes this session."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"process {pid}" if pid else "another process"
        super().__init__(f"session is open for writing in {holder} ({path.name})")


def lock_path_for(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + ".lock")


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


class SessionLock:
    """Holds the write lock of one session log until :meth:`release`."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.path = lock_path_for(log_path)
        self._fd: int | None = None

    def acquire(self, attempts: int = 5) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        # A reader probing "is it locked?" holds the lock for microseconds;
        # a few quick retries keep that from looking like a second writer.
        for attempt in range(attempts):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
                if attempt == attempts - 1:
                    os.close(fd)
                    raise SessionLocked(self.log_path, _read_pid(self.path)) from None
                time.sleep(0.02)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            os.fsync(fd)
        except BaseException:
            os.close(fd)  # closing the only descriptor drops the flock
            raise
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def holder_pid(log_path: Path) -> int | None:
    """The pid of the live writer of ``log_path``, or ``None`` when nobody writes it.

    Probes with a non-blocking exclusive lock that is released at once.
    """
    path = lock_path_for(log_path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return _read_pid(path) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def is_locked(log_path: Path) -> bool:
    return holder_pid(log_path) is not None
