"""Reading project files safely: regular files only, in bounded memory.

A named pipe would block a read forever and a device may never end, so anything
but a regular file is refused before a byte is read (the open never blocks:
``O_NONBLOCK``, then the opened file itself is checked). Lines are read in
pieces of at most :data:`MAX_LINE` bytes, so a file that is one huge line costs no
more memory than a small one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .paths import ToolError

MAX_LINE = 32 * 1024 - 256  # bytes of one line kept (under the output cap); the rest skipped
MAX_EDIT = 8 * 1024 * 1024  # files larger than this are not loaded whole (edit_file)

_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def kind_of(mode: int) -> str | None:
    """What a non-regular file is (``None`` for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


@contextmanager
def open_regular(path: Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading, or :class:`ToolError` when it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise ToolError(f"{path.name} is a directory; use list_dir") from None
    except OSError as exc:
        raise ToolError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind == "a directory":
            raise ToolError(f"{path.name} is a directory; use list_dir")
        if kind is not None:
            raise ToolError(f"{path.name} is {kind}, not a regular file; not read")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def lines(fh: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """``(line, bytes skipped)``: each line (with its newline), cut at :data:`MAX_LINE`."""
    while True:
        line = fh.readline(MAX_LINE)
        if not line:
            return
        if line.endswith(b"\n") or len(line) < MAX_LINE:
            yield line, 0
            continue
        skipped = 0
        while True:  # skip the rest of the long line, a piece at a time
            rest = fh.readline(MAX_LINE)
            skipped += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        yield line, skipped


def read_small(path: Path, limit: int = MAX_EDIT) -> bytes:
    """A whole regular file of at most ``limit`` bytes."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{path.name} is larger than {limit // (1024 * 1024)} MB; not loaded")
    return data
