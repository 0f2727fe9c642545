"""What the chat header says about the project: its folder and git branch."""

from __future__ import annotations

from pathlib import Path


def git_branch(project: Path) -> str | None:
    """The branch checked out in ``project`` (or a parent), read from ``.git/HEAD``
    without running git; a short commit id when detached; ``None`` outside a repo."""
    for folder in (project, *project.parents):
        git = folder / ".git"
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = git.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            git = (folder / text.split(":", 1)[1].strip()).resolve()
        if git.is_dir():
            try:
                head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if head.startswith("ref:"):
                return head.split("/", 2)[-1] if head.startswith("ref: refs/heads/") \
                    else head[4:].strip()
            return head[:8] or None
    return None
