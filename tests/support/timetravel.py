"""Helpers of the time-travel tests: a real git project, digests of trees and of .git."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.resume import cli

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull}


def git(project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(["git", *args], cwd=project, env=env, check=True,
                          capture_output=True, text=True).stdout


def user_repo(project: Path) -> None:
    """The user's own repository: commits, a staged change, a stash, an ignore rule."""
    git(project, "init", "-q")
    (project / ".gitignore").write_text("*.log\nbuild/\n")
    (project / "keep.txt").write_text("keep\n")
    (project / "a.txt").write_text("alpha\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    (project / "a.txt").write_text("alpha 2\n")
    git(project, "stash", "-q")
    (project / "staged.txt").write_text("staged\n")
    git(project, "add", "staged.txt")
    (project / "old.log").write_text("ignored\n")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("secret.env\n")
    (project / "secret.env").write_text("TOKEN=1\n")


def digest_dir(root: Path, *, skip_git: bool = True) -> dict[str, str]:
    """Path -> sha256 (or ``link:TARGET``) of every file under ``root``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_git and ".git" in dirnames and Path(dirpath) == root:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        for d in dirnames:
            if not os.listdir(Path(dirpath) / d):
                out[str((Path(dirpath) / d).relative_to(root)) + "/"] = "dir"
    return out


def digest_git(project: Path) -> dict[str, str]:
    """Bytes and mtimes of the project's own ``.git``."""
    git_dir = project / ".git"
    out = digest_dir(git_dir, skip_git=False)
    for rel in list(out):
        if not out[rel].startswith(("link:", "dir")):
            out[rel] += f":{(git_dir / rel).stat().st_mtime_ns}"
    return out


def run_json(home: Path, project: Path, *args: str, code: int = 0, **env: str) -> Any:
    """``mttui ARGS --json`` expecting exit ``code``; the parsed stdout (or the result)."""
    r = cli(home, project, *args, "--json", **env)
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    return json.loads(r.stdout) if code == 0 else r
