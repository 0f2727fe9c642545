"""Running ``git`` on the shadow repository, isolated from the user's git setup."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


class GitError(RuntimeError):
    """A git command failed (its stderr is the message)."""


def git_available() -> bool:
    """Whether a ``git`` executable is on the PATH."""
    return shutil.which("git") is not None


def git_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """The environment of every shadow git command: its own GIT_DIR, the project as the
    work tree, no user or system config, no hooks, no opportunistic lock taking."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_AUTHOR_NAME="mttui",
        GIT_AUTHOR_EMAIL="mttui@localhost",
        GIT_COMMITTER_NAME="mttui",
        GIT_COMMITTER_EMAIL="mttui@localhost",
        LC_ALL="C",
    )
    return env


def run_git(env: dict[str, str], cwd: Path, *args: str, stdin: bytes | None = None,
            check: bool = True) -> bytes:
    """Run ``git ARGS`` and return its stdout; raises :class:`GitError` on failure."""
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off", "-c", "core.autocrlf=false",
         "-c", "core.symlinks=true", "-c", "gc.auto=0", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, check=False,
    )
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else proc.returncode}")
    return proc.stdout
