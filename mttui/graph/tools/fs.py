"""File tools: read, list, search, write and edit inside the project directory."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import BinaryIO

from .paths import OUTPUT_CAP, ToolError, confine, display
from .reading import kind_of, lines, open_regular, read_small

MAX_READ_LINES = 2000
MAX_LIST_ENTRIES = 1000
MAX_MATCHES = 200
MAX_SEARCH_FILE = 2 * 1024 * 1024
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}


def _read_text(path: Path) -> str:
    """A whole (not too large) regular text file, for edits."""
    data = read_small(path)
    if b"\0" in data[:8192]:
        raise ToolError(f"{path.name} looks like a binary file; not shown")
    return data.decode("utf-8", errors="replace")


def read_file(project: Path, path: str, offset: int | None = None, limit: int | None = None) -> str:
    """Lines ``offset`` (1-based, default 1) .. ``offset + limit - 1`` of a text file.

    Streamed: at most about OUTPUT_CAP bytes are kept, whatever the file's size.
    """
    target = confine(project, path, must_exist=True)
    start = max(int(offset or 1), 1) - 1
    count = int(limit) if limit else MAX_READ_LINES
    if count <= 0:
        raise ToolError("limit must be positive")
    kept: list[bytes] = []
    size = 0
    total = 0
    cut_at: int | None = None  # the first line not shown because the output is full
    with open_regular(target) as fh:
        if b"\0" in fh.peek(8192)[:8192]:  # type: ignore[attr-defined]
            raise ToolError(f"{target.name} looks like a binary file; not shown")
        for line, skipped in lines(fh):
            total += 1
            if total <= start:
                continue
            if len(kept) >= count or (size + len(line) > OUTPUT_CAP and kept):
                cut_at = total if len(kept) < count else None
                break
            if skipped:
                line += f"\n[line cut: {skipped} more bytes of it not shown]\n".encode()
            kept.append(line)
            size += len(line)
        total += _count_lines(fh)
    if total == 0:
        return f"({display(project, target)} is empty)"
    text = b"".join(kept).decode("utf-8", errors="replace")
    shown_to = start + len(kept)
    rest = total - shown_to
    if rest > 0:
        why = "output limit reached; " if cut_at is not None else ""
        text += f"\n[{rest} more lines; {why}read on with offset={shown_to + 1}]"
    return text


def _count_lines(fh: BinaryIO) -> int:
    """Lines from the current position to the end, counted a chunk at a time."""
    count, last = 0, b"\n"
    while chunk := fh.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def list_dir(project: Path, path: str = ".") -> str:
    """Entries of a directory, directories first, with a trailing ``/``."""
    target = confine(project, path or ".", must_exist=True)
    if not target.is_dir():
        raise ToolError(f"{display(project, target)} is not a directory")
    entries = sorted(os.scandir(target), key=lambda e: (not e.is_dir(), e.name))
    shown = [e.name + ("/" if e.is_dir() else "") for e in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        shown.append(f"[{len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
    return "\n".join(shown) if shown else f"({display(project, target)} is empty)"


def search_files(
    project: Path, pattern: str, path: str | None = None, glob: str | None = None
) -> str:
    """``file:line: text`` for every line matching the regex ``pattern``."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    root = confine(project, path or ".", must_exist=True)
    files = [root] if root.is_file() else _walk(root)
    hits: list[str] = []
    proj = Path(project).resolve()
    for file in files:
        rel = display(proj, file)
        if glob and not (fnmatch.fnmatch(file.name, glob) or fnmatch.fnmatch(rel, glob)):
            continue
        try:
            st = file.stat()
            if kind_of(st.st_mode) is not None or st.st_size > MAX_SEARCH_FILE:
                continue  # pipes and devices could block or never end
            data = read_small(file, MAX_SEARCH_FILE)
        except (OSError, ToolError):
            continue
        if b"\0" in data[:8192]:
            continue
        for no, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                hits.append(f"{rel}:{no}: {line[:300]}")
                if len(hits) >= MAX_MATCHES:
                    hits.append(f"[stopped after {MAX_MATCHES} matches]")
                    return "\n".join(hits)
    return "\n".join(hits) if hits else "no matches"


def _walk(root: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        # symlinked directories are not followed (os.walk default) so nothing escapes
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if not full.is_symlink():
                out.append(full)
    return out


def write_file(project: Path, path: str, content: str) -> str:
    """Create or overwrite a file (parent directories are created)."""
    target = confine(project, path)
    if target.is_dir():
        raise ToolError(f"{display(project, target)} is a directory")
    if target.exists() and kind_of(target.stat().st_mode) is not None:
        kind = kind_of(target.stat().st_mode)
        raise ToolError(f"{display(project, target)} is {kind}, not a regular file; not written")
    existed = target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    verb = "overwrote" if existed else "created"
    return f"{verb} {display(project, target)} ({len(content.encode('utf-8'))} bytes)"


def edit_file(project: Path, path: str, old: str, new: str) -> str:
    """Replace the one exact occurrence of ``old`` by ``new``."""
    target = confine(project, path, must_exist=True)
    text = _read_text(target)
    if not old:
        raise ToolError("old must not be empty")
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old text not found in {display(project, target)}")
    if count > 1:
        raise ToolError(
            f"old text occurs {count} times in {display(project, target)}; "
            "include more surrounding text so it is unique"
        )
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return f"edited {display(project, target)} (1 replacement)"


def planned_content(
    project: Path, tool_name: str, args: dict[str, object]
) -> tuple[Path, str, str]:
    """``(path, before, after)`` of a write_file/edit_file call, without writing."""
    target = confine(project, str(args.get("path", "")))
    before = _read_text(target) if target.is_file() else ""
    if tool_name == "write_file":
        return target, before, str(args.get("content", ""))
    old, new = str(args.get("old", "")), str(args.get("new", ""))
    if not old or before.count(old) != 1:
        raise ToolError("the edit does not match exactly once")
    return target, before, before.replace(old, new, 1)
