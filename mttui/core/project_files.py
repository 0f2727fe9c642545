"""The project's files for the ``@`` list: ``.gitignore`` honoured, ranked fuzzily.

In a git work tree the list comes from ``git ls-files --cached --others
--exclude-standard`` (git's own ignore rules, nested ``.gitignore`` files
included); elsewhere from a walk that skips the usual tool directories and the
patterns of the project's top ``.gitignore``. Ranking is a substring match (in
the file name first) then a subsequence match, shortest paths first.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
                       ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox"})  # fmt: skip
MAX_FILES = 200_000


@dataclass
class ProjectFiles:
    """The file list of one project (read once by :meth:`load`, lowered for ranking)."""

    project: Path
    files: list[str] = field(default_factory=list)
    _lower: list[str] = field(default_factory=list, repr=False)

    def load(self) -> list[str]:
        files = git_files(self.project)
        if files is None:
            files = walk_files(self.project)
        self.files = sorted(files, key=lambda f: (f.count("/"), f))[:MAX_FILES]
        self._lower = [f.lower() for f in self.files]
        return self.files

    def rank(self, query: str, limit: int = 20) -> list[str]:
        """The best ``limit`` files for ``query`` (all, shallowest first, when empty)."""
        q = query.lower()
        if not q:
            return self.files[:limit]
        in_name: list[tuple[int, str]] = []
        in_path: list[tuple[int, str]] = []
        loose: list[tuple[int, str]] = []
        pattern = re.compile(".*?".join(re.escape(c) for c in q))
        for f, low in zip(self.files, self._lower, strict=True):
            i = low.find(q)
            if i >= 0:
                (in_name if i > low.rfind("/") else in_path).append((len(f), f))
            elif pattern.search(low):
                loose.append((len(f), f))
        out: list[str] = []
        for bucket in (in_name, in_path, loose):
            bucket.sort()
            out.extend(f for _, f in bucket[: limit - len(out)])
            if len(out) >= limit:
                break
        return out


def git_files(project: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files, or ``None`` outside a git work tree."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(project), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            capture_output=True, timeout=20, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="replace").split("\0")
    return [n for n in dict.fromkeys(names) if n]  # a file deleted since: refused on send


def _ignore_patterns(project: Path) -> list[str]:
    try:
        lines = (project / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in lines.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            out.append(line.rstrip("/").lstrip("/"))
    return out


def _ignored(rel: str, name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def walk_files(project: Path) -> list[str]:
    """Files under ``project`` outside git: tool directories and top-level
    ``.gitignore`` patterns skipped."""
    patterns = _ignore_patterns(project)
    out: list[str] = []
    root = str(project)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS
                       and not _ignored(rel_dir + d, d, patterns)]  # fmt: skip
        for name in filenames:
            if not _ignored(rel_dir + name, name, patterns):
                out.append(rel_dir + name)
        if len(out) >= MAX_FILES:
            break
    return out
