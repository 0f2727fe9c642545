"""Reading a file that must stay inside a root: ``AGENTS.md`` and ``@file`` attachments.

A file is read only when it is a regular file whose real path is inside the root
(a symlink may point elsewhere inside it, never out), and it is never opened
before :func:`os.lstat` says it is a regular file: a FIFO, a socket or a device is
refused without an ``open`` (which could block or have side effects). The open
itself uses ``O_NOFOLLOW | O_NONBLOCK`` and the opened descriptor is checked
again (``fstat`` and its real path through ``/proc/self/fd``), so a path swapped
between the check and the open is refused, not followed.

Hard links: another name of the same file may lie outside the root, and nothing
finds it cheaply. A file with one link is fine; one with ``st_nlink > 1`` is read
only when all its names are found under the root (a walk of the root that stops
after :data:`WALK_LIMIT` entries). So a hard link into the user's home is refused
and so is a file linked from a package store outside the project (pnpm's);
links between files of the project itself are read.

Reads are bounded: at most ``limit`` bytes (plus one, to know the file goes on),
whatever the file's size.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

WALK_LIMIT = 200_000  # directory entries looked at to find a hard link's other names
_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))  # fmt: skip


class Refused(Exception):
    """The file cannot be read here; the text says why (no path in it)."""


class Missing(Refused):
    """Nothing of that name exists (or a dangling symlink)."""


@dataclass(frozen=True)
class Read:
    """What was read: ``data`` (at most ``limit`` bytes), the file's ``size`` and where
    it really is."""

    path: Path
    data: bytes
    size: int

    @property
    def cut(self) -> int:
        """Bytes of the file that were not read."""
        return max(0, self.size - len(self.data))


def inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def real_path(root: Path, name: str | os.PathLike[str], where: str = "the project") -> Path:
    """``name`` (relative to ``root`` unless absolute) with every symlink followed;
    :class:`Refused` when that is outside ``root`` (``root`` itself resolved), which
    the message calls ``where``."""
    candidate = Path(name).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # changed while it was resolved; a loop
        raise Refused(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not inside(root.resolve(), resolved):
        raise Refused(f"a symlink to outside {where}" if _via_link(root, candidate)
                      else f"outside {where}")  # fmt: skip
    return resolved


def _via_link(root: Path, candidate: Path) -> bool:
    """Whether ``candidate`` lexically stays in ``root`` (so a symlink took it out)."""
    return inside(Path(os.path.normpath(root.absolute())),
                  Path(os.path.normpath(candidate.absolute())))  # fmt: skip


def read_confined(root: Path, name: str | os.PathLike[str], limit: int,
                  where: str = "the project") -> Read:
    """At most ``limit`` bytes of the regular file ``name`` whose real path is in
    ``root`` (``where`` in messages); :class:`Refused` (or :class:`Missing`) otherwise."""
    base = root.resolve()
    path = real_path(base, name, where)
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        raise Missing("no such file") from None
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    _check_kind(before.st_mode)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        _check_kind(st.st_mode)
        if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise Refused("changed while it was opened; refused")
        opened = _fd_path(fd)
        if opened is not None and not inside(base, opened):
            raise Refused(f"a symlink to outside {where}")
        if st.st_nlink > 1 and not _all_names_inside(base, st):
            raise Refused(f"a hard link with another name outside {where}; refused")
        data, more = _read_at_most(fd, limit)
    finally:
        os.close(fd)
    return Read(path, data, max(st.st_size, limit + 1) if more else len(data))


def _check_kind(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise Refused("is a directory")
    if not stat.S_ISREG(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a symlink that changed" if stat.S_ISLNK(mode) else "special")
        raise Refused(f"not a regular file ({kind}); refused")  # fmt: skip


def _fd_path(fd: int) -> Path | None:
    """The opened file's real path (Linux); ``None`` where ``/proc`` does not say."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def _read_at_most(fd: int, limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes, and whether the file goes on after them."""
    chunks: list[bytes] = []
    left = limit + 1  # one byte more: whether the file goes on
    while left > 0:
        try:
            chunk = os.read(fd, min(left, 64 * 1024))
        except BlockingIOError:  # a regular file never blocks; be safe anyway
            break
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


def _all_names_inside(root: Path, st: os.stat_result) -> bool:
    """Whether all ``st.st_nlink`` names of the file are under ``root`` (bounded walk)."""
    found = 0
    seen = 0
    stack = [str(root)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > WALK_LIMIT:
                    return False
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.inode() == st.st_ino:
                        mine = entry.stat(follow_symlinks=False)
                        found += (mine.st_dev, mine.st_ino) == (st.st_dev, st.st_ino)
                except OSError:
                    continue
                if found >= st.st_nlink:
                    return True
    return False
