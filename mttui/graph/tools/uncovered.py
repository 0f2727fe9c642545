"""What a file snapshot cannot bring back, found for the sandbox's read-only binds.

The shadow repository (``session/snapshots``) never holds a ``.git``, a nested
repository, a git-ignored path or a file over :data:`MAX_FILE_BYTES`. Every
``.git`` is bound read-only in every sandboxed call (a hook or a config written
there runs unsandboxed at the user's next ``git``); the rest is bound read-only
when a command runs unasked (``auto-edit``), so that whatever it does a rewind
can undo.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mttui.session.snapshots import GitError
from mttui.session.snapshots.git import git_env, run_git
from mttui.session.snapshots.shadow import MAX_FILE_BYTES

MAX_GUARDED = 1000  # read-only binds one unasked call may need; more: the command asks
MAX_GUARDED_BYTES = 256 * 1024  # their paths' total length (bwrap's argv stays small)


@dataclass
class Tree:
    """One walk of the project: every ``.git`` (file or directory), every nested
    repository (a directory below the project holding a ``.git``) and every regular
    file over the snapshot's size limit. Symlinks are never followed."""

    gits: list[Path] = field(default_factory=list)
    nested: list[Path] = field(default_factory=list)
    big: list[Path] = field(default_factory=list)


def walk(project: Path, *, sizes: bool = False) -> Tree:
    """Walk ``project`` (never into a ``.git``); ``sizes``: also find big files."""
    root = Path(project)
    tree = Tree()
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name == ".git":
                    tree.gits.append(Path(entry.path))
                    if here != root:
                        tree.nested.append(here)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif sizes and entry.is_file(follow_symlinks=False) and (
                        entry.stat(follow_symlinks=False).st_size > MAX_FILE_BYTES):
                    tree.big.append(Path(entry.path))
            except OSError:
                continue
    return tree


def ignored(project: Path) -> list[Path]:
    """The git-ignored paths of ``project`` under the snapshot's own rules (the
    project's ``.gitignore`` files and ``.git/info/exclude``); an ignored directory
    is one entry. Raises :class:`GitError` when git cannot answer."""
    if shutil.which("git") is None:
        raise GitError("git is not on PATH")
    root = Path(project)
    with tempfile.TemporaryDirectory(prefix="mttui-ignored-") as tmp:
        git_dir = Path(tmp) / "git"
        env = git_env(git_dir, root)
        run_git(env, root, "init", "-q")
        exclude = root / ".git" / "info" / "exclude"
        if exclude.is_file() and not exclude.is_symlink():
            (git_dir / "info").mkdir(exist_ok=True)
            (git_dir / "info" / "exclude").write_bytes(exclude.read_bytes())
        out = run_git(env, root, "ls-files", "-z", "--others", "--ignored",
                      "--exclude-standard", "--directory")
    return [root / os.fsdecode(raw).rstrip("/") for raw in out.split(b"\0") if raw]


def guarded(project: Path, tree: Tree) -> list[Path] | None:
    """What an unasked command must find read-only: nested repositories, ignored
    paths and big files, outermost first, none under another; ``None`` when they
    are too many to bind (or git cannot list the ignored ones) — the call asks."""
    try:
        paths = [*tree.nested, *ignored(project), *tree.big]
    except (GitError, OSError):
        return None
    chosen: list[Path] = []
    taken: set[Path] = set()
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if taken.intersection(path.parents):
            continue
        if os.path.lexists(path) and not path.is_symlink():
            chosen.append(path)
            taken.add(path)
    if len(chosen) > MAX_GUARDED or sum(len(str(p)) for p in chosen) > MAX_GUARDED_BYTES:
        return None
    return chosen


def bindable(project: Path, path: Path) -> Path | None:
    """Where a read-only bind for ``path`` goes: itself, or for a symlink its target
    when that is inside the project (outside, everything is read-only already)."""
    try:
        if not path.is_symlink():
            return path if os.path.lexists(path) else None
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    root = Path(project).resolve()
    return target if target != root and root in target.parents else None
