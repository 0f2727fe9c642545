"""The shadow repository of one project: ``$MTTUI_HOME/snapshots/<project-hash>/``.

``GIT_DIR`` is the shadow directory and the work tree is the project, so the
project's own ``.git`` is never read for objects or written (only its
``info/exclude`` is copied, so that it is honoured like ``.gitignore``). Files over
:data:`MAX_FILE_BYTES` are never added (they are reported as ``skipped``); git
stores symlinks as links, so nothing outside the project is ever read.

An unchanged tree costs one ``git status`` (the shadow index keeps stat info) and
reuses the previous snapshot's commit.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import config_file, ensure_dir, project_hash
from .git import GitError, git_env, run_git
from .guard import is_protected, tool_running, tools_quiet

MAX_FILE_BYTES = 10 * 1024 * 1024
REF = "refs/heads/snapshots"
_META = "mttui-last.json"


def snapshots_dir(home: Path, phash: str) -> Path:
    """Where the shadow repository of the project with hash ``phash`` lives."""
    return Path(home) / "snapshots" / phash


@dataclass(frozen=True)
class Snapshot:
    """One snapshot: ``ref`` (a commit of the shadow repository), the number of files
    it holds, and the files left out because they are over the size limit."""

    ref: str
    files: int
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Changes:
    """What a restore changes (or would change): paths relative to the project."""

    restored: list[str]
    deleted: list[str]


class ShadowRepo:
    """The file checkpoints of one project (every method blocks on ``git``)."""

    def __init__(self, home: Path, project: Path) -> None:
        self.project = Path(project).resolve()
        self.home = Path(home)
        self.git_dir = snapshots_dir(self.home, project_hash(self.project))
        self.env = git_env(self.git_dir, self.project)

    # -- plumbing -------------------------------------------------------------
    def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        return run_git(self.env, self.project, *args, stdin=stdin, check=check)

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").exists()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One snapshot or restore at a time per project (two sessions may share it)."""
        self._init()
        fd = os.open(self.git_dir / "mttui.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            stale = self.git_dir / "index.lock"  # left by a killed git: we hold the lock
            if stale.exists():
                stale.unlink()
            yield
        finally:
            os.close(fd)

    def _init(self) -> None:
        if self.exists:
            return
        ensure_dir(self.git_dir.parent)
        ensure_dir(self.git_dir)
        self._git("init", "-q")
        self._git("symbolic-ref", "HEAD", REF)  # ``status`` compares with the last snapshot
        self._git("config", "core.untrackedCache", "true")
        self._git("config", "core.fsmonitor", "false")

    def _own_dirs(self) -> list[str]:
        """mttui's own directories inside the project (the data home with its logs and
        snapshots, the config dir): never snapshotted, never restored."""
        out = []
        for path in (self.home, config_file().parent):
            try:
                rel = Path(path).resolve().relative_to(self.project)
            except (OSError, ValueError):
                continue
            out.append("" if str(rel) == "." else rel.as_posix())
        return out

    def _sync_excludes(self) -> None:
        """The project's ``.git/info/exclude`` (if any) and mttui's own directories as the
        shadow's excludes; attributes that make git store and check out every file's bytes
        as they are (the project's ``.gitattributes`` may ask for eol or filter changes)."""
        src = self.project / ".git" / "info" / "exclude"
        text = b""
        try:
            if src.is_file() and not src.is_symlink():
                text = src.read_bytes()
        except OSError:
            text = b""
        own = "".join(f"/{_glob_escape(rel)}/\n" for rel in self._own_dirs() if rel)
        _write_if_changed(self.git_dir / "info" / "exclude",
                          text + b"\n# mttui's own files\n" + own.encode())
        _write_if_changed(self.git_dir / "info" / "attributes", _RAW_ATTRIBUTES)

    def _big(self, rel: str) -> bool:
        try:
            st = (self.project / rel).lstat()
        except OSError:
            return False
        import stat

        return stat.S_ISREG(st.st_mode) and st.st_size > MAX_FILE_BYTES

    def head(self) -> str | None:
        out = self._git("rev-parse", "-q", "--verify", REF, check=False).strip()
        return out.decode() or None

    def has(self, ref: str) -> bool:
        """Whether ``ref`` is a commit of this repository."""
        if not self.exists or not ref:
            return False
        out = self._git("cat-file", "-t", ref, check=False).strip()
        return out == b"commit"

    # -- snapshot -------------------------------------------------------------
    def snapshot(self, message: str = "snapshot") -> Snapshot:
        """Snapshot the project's files now (reusing the last commit when nothing changed)."""
        with self._locked():
            self._sync_excludes()
            status = self._git("status", "--porcelain=v1", "-z", "--untracked-files=all",
                               "--no-renames", "--ignore-submodules=all")
            changed: list[str] = []
            untrack: list[str] = []
            skipped: list[str] = []
            own = self._own_dirs()
            for entry in status.split(b"\0"):
                if len(entry) < 4:
                    continue
                code, rel = entry[:2].decode(), os.fsdecode(entry[3:])
                if _under(rel, own):  # re-included by a .gitignore's "!", or an old snapshot
                    if code != "??":
                        untrack.append(rel)
                    continue
                if rel.endswith("/"):
                    skipped.append(rel)  # a nested repository: not in the snapshot, said so
                    continue
                if self._big(rel):
                    skipped.append(rel)
                    if code != "??":
                        untrack.append(rel)
                    continue
                changed.append(rel)
            head = self.head()
            meta = self._meta()
            if head is not None and not changed and not untrack and meta.get("ref") == head:
                files = meta.get("files")
                return Snapshot(head, files if isinstance(files, int) else 0, sorted(skipped))
            if untrack:
                self._git("rm", "--cached", "-q", "--ignore-unmatch",
                          "--pathspec-from-file=-", "--pathspec-file-nul",
                          stdin=_nul(untrack))
            if changed:
                self._git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                          stdin=_nul(changed))
            tree = self._git("write-tree").strip().decode()
            parent = ["-p", head] if head else []
            commit = self._git("commit-tree", tree, *parent, "-m", message).strip().decode()
            self._git("update-ref", REF, commit)
            files = self._git("ls-files", "-z").count(b"\0")
            self._save_meta({"ref": commit, "files": files})
            return Snapshot(commit, files, sorted(skipped))

    def _meta(self) -> dict[str, object]:
        try:
            data = json.loads((self.git_dir / _META).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save_meta(self, data: dict[str, object]) -> None:
        tmp = self.git_dir / (_META + ".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.git_dir / _META)

    # -- comparing and restoring ------------------------------------------------
    def changes(self, ref: str) -> Changes:
        """What restoring ``ref`` would change now, read-only (a dry run)."""
        self._sync_check(ref)
        env = dict(self.env, GIT_OPTIONAL_LOCKS="0")
        out = run_git(env, self.project, "diff", "--no-renames", "--name-status", "-z", ref)
        restored, deleted = _split_diff(out, reverse=True)
        untracked = run_git(env, self.project, "ls-files", "-o", "--exclude-standard", "-z")
        for raw in untracked.split(b"\0"):
            rel = os.fsdecode(raw)
            if rel and not rel.endswith("/"):
                deleted.append(rel)
        return self._filter(restored, deleted, ref)

    def diff_between(self, ref_from: str, ref_to: str) -> Changes:
        """What going from snapshot ``ref_from`` to snapshot ``ref_to`` changes."""
        out = self._git("diff", "--no-renames", "--name-status", "-z", ref_from, ref_to)
        restored, deleted = _split_diff(out, reverse=False)
        return self._filter(restored, deleted, ref_to)

    def diff_stat(self, ref_from: str, ref_to: str) -> str:
        """A short ``--stat`` summary between two snapshots."""
        out = self._git("diff", "--stat=100", "--no-renames", ref_from, ref_to, check=False)
        return out.decode("utf-8", "replace")

    def worktree_stat(self, ref: str) -> str:
        """A short ``--stat`` of what restoring ``ref`` would change in tracked files,
        read-only (no index refresh is written)."""
        env = dict(self.env, GIT_OPTIONAL_LOCKS="0")
        out = run_git(env, self.project, "diff", "--stat=100", "-R", "--no-renames", ref,
                      check=False)
        return out.decode("utf-8", "replace")

    def restore(self, ref_from: str, ref_to: str,
                protect: frozenset[tuple[int, int]] = frozenset()) -> Changes:
        """Bring the files from snapshot ``ref_from`` (the tree now) to ``ref_to``:
        changed and deleted files get their content back, created ones are removed.
        Ignored and skipped files, mttui's own and the files ``protect`` names
        (``(st_dev, st_ino)``: the rewind's own output) are never touched."""
        with self._locked():
            self._sync_excludes()
            found = self.diff_between(ref_from, ref_to)
            changes = Changes(
                [p for p in found.restored if not is_protected(self.project / p, protect)],
                [p for p in found.deleted if not is_protected(self.project / p, protect)])
            if changes.restored:
                for rel in changes.restored:
                    _clear_way(self.project, rel)
                self._git("checkout", ref_to, "--pathspec-from-file=-", "--pathspec-file-nul",
                          stdin=_nul(changes.restored))
            for rel in changes.deleted:
                path = self.project / rel
                if os.path.lexists(path) and not path.is_dir() or path.is_symlink():
                    path.unlink()
                _prune_dirs(self.project, path.parent)
            return changes

    def _sync_check(self, ref: str) -> None:
        if not self.has(ref):
            raise GitError(f"no snapshot {ref}")

    def tool_running(self) -> AbstractContextManager[None]:
        """Held while a side-effecting tool may change the project (see ``guard``)."""
        return tool_running(self.git_dir)

    def tools_quiet(self) -> AbstractContextManager[None]:
        """Held by a code rewind; raises ``ToolsRunning`` when a tool runs."""
        return tools_quiet(self.git_dir)

    def _filter(self, restored: list[str], deleted: list[str], ref: str) -> Changes:
        own = self._own_dirs()

        def ok(p: str) -> bool:
            return _inside(p) and not self._big(p) and not _under(p, own)

        keep = [p for p in restored if ok(p)]
        gone = [p for p in deleted if ok(p)]
        ignored = self._ignored_in(ref, gone) if gone else set()
        gone = [p for p in gone if p not in ignored]
        return Changes(sorted(set(keep)), sorted(set(gone)))

    def _ignored_in(self, ref: str, paths: list[str]) -> set[str]:
        """Which of ``paths`` the ignore rules of snapshot ``ref`` ignore: a file ignored
        then (not in the snapshot for that reason) is the user's, never deleted."""
        import tempfile

        listing = self._git("ls-tree", "-r", "-z", "--name-only", ref)
        rules = [os.fsdecode(n) for n in listing.split(b"\0")
                 if n == b".gitignore" or n.endswith(b"/.gitignore")]
        with tempfile.TemporaryDirectory(prefix="mttui-ignore-") as tmp:
            for rel in rules:
                dst = Path(tmp) / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(self._git("cat-file", "blob", f"{ref}:{rel}"))
            env = dict(git_env(self.git_dir, Path(tmp)), GIT_OPTIONAL_LOCKS="0")
            env.pop("GIT_LITERAL_PATHSPECS")  # check-ignore refuses pathspec magic
            out = run_git(env, Path(tmp), "check-ignore", "--no-index", "-z", "--stdin",
                          stdin=_nul(paths), check=False)
        return {os.fsdecode(p) for p in out.split(b"\0") if p}


def _split_diff(out: bytes, *, reverse: bool) -> tuple[list[str], list[str]]:
    """``--name-status -z`` → (restored, deleted) for a restore of the diff's *old*
    side (``reverse``) or of its *new* side."""
    parts = out.split(b"\0")
    restored: list[str] = []
    deleted: list[str] = []
    for i in range(0, len(parts) - 1, 2):
        status, rel = parts[i].decode()[:1], os.fsdecode(parts[i + 1])
        if status in ("M", "T"):
            restored.append(rel)
        elif status == "A":
            (deleted if reverse else restored).append(rel)
        elif status == "D":
            (restored if reverse else deleted).append(rel)
    return restored, deleted


# $GIT_DIR/info/attributes wins over every .gitattributes of the work tree
_RAW_ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding -export-subst\n"


def _glob_escape(rel: str) -> str:
    return "".join("\\" + c if c in "*?[]\\!# " else c for c in rel)


def _under(rel: str, dirs: list[str]) -> bool:
    """Whether ``rel`` is inside one of ``dirs`` (``""``: the project itself is one)."""
    return any(d == "" or rel == d or rel.startswith(d + "/") for d in dirs)


def _write_if_changed(dst: Path, data: bytes) -> None:
    try:
        current = dst.read_bytes()
    except OSError:
        current = None
    if current != data:
        ensure_dir(dst.parent)
        dst.write_bytes(data)


def _nul(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _inside(rel: str) -> bool:
    return bool(rel) and not rel.startswith("/") and ".." not in Path(rel).parts


def _clear_way(project: Path, rel: str) -> None:
    """Remove a symlink standing where a parent directory of ``rel`` must be, so that
    a restore never writes through a link out of the project."""
    current = project
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
            return


def _prune_dirs(project: Path, directory: Path) -> None:
    """Remove ``directory`` and its parents while empty (never the project itself)."""
    while directory != project and project in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


__all__ = ["MAX_FILE_BYTES", "Changes", "GitError", "ShadowRepo", "Snapshot", "snapshots_dir"]
