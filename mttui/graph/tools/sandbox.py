"""The ``workspace`` sandbox: ``shell`` commands under bubblewrap (``bwrap``).

The whole file system is mounted read-only, the project directory writable except
every ``.git`` in it; ``/tmp``, ``/var/tmp``, ``/run``, ``$XDG_RUNTIME_DIR`` and
``/dev/shm`` private (no host Unix socket there); the network gone (unless
``sandbox_network = true``); a new user namespace with no capabilities, even for
root (mounts cannot be changed, no nested user namespace); a new PID namespace (the
agent's processes and their ``/proc/*/environ`` are invisible) with a task limit
(:mod:`.pids`); and the sandbox dies with its parent, so nothing a command forks
outlives the call.

:meth:`Sandbox.prefix` gives the argv prefix the shell tool puts before
``bash -c COMMAND``; it raises :class:`SandboxUnavailable` (one line saying how to
install bwrap or turn the sandbox off) when ``bwrap`` cannot run — shell calls
then fail closed, never unsandboxed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .pids import PIDS_MAX, ulimit_wrapper
from .uncovered import bindable, walk
from .uncovered import guarded as guarded_paths

HOW_TO_FIX = ("install bubblewrap (e.g. apt install bubblewrap) or turn the sandbox off "
              "(--sandbox off, MTTUI_SANDBOX=off or sandbox = \"off\" in config.toml)")


TOO_MANY = ("sandbox: too many paths a rewind cannot restore (git-ignored, nested "
            "repositories, files over 10 MB) to protect; this command needs approval")


class SandboxUnavailable(RuntimeError):
    """``bwrap`` is missing or cannot create namespaces (the message is one line)."""


def _probe_argv(bwrap: str) -> list[str]:
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net",
            "--die-with-parent", "--", "true"]


def probe_bwrap() -> str | None:
    """``None`` when ``bwrap`` works here, else why not (one line)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not on PATH"
    try:
        done = subprocess.run(_probe_argv(bwrap), capture_output=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return "bwrap cannot create namespaces: " + (why[-1] if why else
                                                    f"exit code {done.returncode}")
    return None


@dataclass
class Sandbox:
    """The sandbox setting of one runner; ``bwrap`` is probed once, when first needed.

    ``mode``: ``off``, ``workspace``, or ``None`` (not set: ``workspace`` when bwrap
    works, else ``off`` with a notice)."""

    mode: str | None = None
    network: bool = False
    pids: int = PIDS_MAX
    protect: tuple[Path, ...] = ()  # read-only when inside the project (the data home)
    _lockable: bool | None = field(default=None, repr=False)
    _checked: bool = field(default=False, repr=False)
    _problem: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def problem(self) -> str | None:
        """Why bwrap cannot be used (``None``: it works); probed once."""
        with self._lock:
            if not self._checked:
                self._problem = probe_bwrap()
                self._checked = True
            return self._problem

    @property
    def active(self) -> bool:
        """Whether shell commands run sandboxed (or, with ``workspace`` set and bwrap
        unusable, fail closed)."""
        if self.mode == "off":
            return False
        if self.mode == "workspace":
            return True
        return self.problem() is None

    def notice(self) -> str | None:
        """The one-time notice when the sandbox was not set and bwrap is unusable."""
        if self.mode is None and self.problem() is not None:
            return (f"sandbox off: {self.problem()}; shell commands run unsandboxed "
                    "(to sandbox them, " + HOW_TO_FIX.split(" or ")[0] + ")")
        return None

    def prefix(self, project: Path, *, guarded: bool = False) -> list[str]:
        """The argv before ``bash -c COMMAND`` (empty when the sandbox is off)."""
        return self.plan(project, guarded=guarded)[0]

    def plan(self, project: Path, *, guarded: bool = False) -> tuple[list[str], set[Path]]:
        """The argv before ``bash -c COMMAND`` and the ``.git`` entries it protects
        (empty when the sandbox is off).

        ``guarded``: the call runs unasked, so what a snapshot cannot restore is bound
        read-only too (:mod:`.uncovered`); raises :class:`SandboxUnavailable` when that
        is too much to bind (the call must ask instead)."""
        if not self.active:
            return [], set()
        problem = self.problem()
        if problem is not None:
            raise SandboxUnavailable(f"sandbox: {problem}; {HOW_TO_FIX}")
        bwrap = shutil.which("bwrap") or "bwrap"
        root = Path(project).resolve()
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                # uid 0 writes sysctls without any capability: keep them read-only
                "--ro-bind", "/proc/sys", "/proc/sys",
                "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
        hidden = masks(self.network)
        argv += [*hidden, "--bind", str(root), str(root)]
        for i in range(0, len(hidden), 2):  # a masked directory inside the project stays so
            if hidden[i] == "--tmpfs" and root in Path(hidden[i + 1]).parents:
                argv += hidden[i:i + 2]
        tree = walk(root, sizes=guarded)
        keep = [p for p in map(Path.resolve, map(Path, self.protect))
                if root in p.parents]  # mttui's own data, when it is in the project
        if guarded:
            found = guarded_paths(root, tree)
            if found is None:
                raise SandboxUnavailable(TOO_MANY)
            keep += found
        keep += tree.gits
        for path in keep:
            target = bindable(root, path)
            if target is not None:
                argv += ["--ro-bind", str(target), str(target)]
        argv += ["--chdir", str(root), "--unshare-user", *self._userns_lock(bwrap),
                 "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                 "--die-with-parent", "--new-session"]
        if not self.network:
            argv.append("--unshare-net")
        return [*argv, "--", *ulimit_wrapper(self.pids)], set(tree.gits)

    @staticmethod
    def new_repositories(project: Path, before: set[Path]) -> str:
        """A note naming each ``.git`` a command created (it could not be protected:
        git runs its hooks and config when the user next uses git there)."""
        root = Path(project).resolve()
        made = sorted(set(walk(root).gits) - before)
        if not made:
            return ""
        names = ", ".join(str(p.relative_to(root)) for p in made[:5])
        more = f" and {len(made) - 5} more" if len(made) > 5 else ""
        return (f"[note: this command created {names}{more}; git runs the hooks and "
                "config found there when you next use git in it — review them first]")

    def guardable(self, project: Path) -> bool:
        """Whether an unasked call can be guarded (what the snapshot misses is few
        enough to bind read-only)."""
        root = Path(project).resolve()
        return guarded_paths(root, walk(root, sizes=True)) is not None

    def _userns_lock(self, bwrap: str) -> list[str]:
        """``--disable-userns`` where bwrap has it (0.8+): no nested user namespace."""
        with self._lock:
            if self._lockable is None:
                try:
                    text = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10,
                                          stdin=subprocess.DEVNULL).stdout
                except (OSError, subprocess.TimeoutExpired):
                    text = b""
                self._lockable = b"--disable-userns" in text
            return ["--disable-userns"] if self._lockable else []


def masks(network: bool) -> list[str]:
    """Private tmpfs over every usual home of host Unix sockets (docker's, the
    session bus, ``$XDG_RUNTIME_DIR``); ``--dev`` already gives a private /dev/shm.
    With the network allowed, a ``resolv.conf`` kept under /run stays readable."""
    argv: list[str] = []
    dirs = ["/tmp", "/var/tmp", "/run", "/var/run"]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        dirs.append(runtime)
    done: list[Path] = []
    for raw in dirs:
        path = Path(raw)
        if path.is_symlink() or not path.is_dir():
            continue  # /var/run -> /run: masked through its target
        real = path.resolve()
        if any(real == d or d in real.parents for d in done):
            continue
        done.append(real)
        argv += ["--tmpfs", str(real)]
    for sock in _announced_sockets():  # an agent's socket kept elsewhere (~/.ssh/…)
        if sock.exists() and not any(d in sock.parents for d in done):
            argv += ["--ro-bind", "/dev/null", str(sock)]
    if network:
        resolv = Path("/etc/resolv.conf").resolve()
        if any(d in resolv.parents for d in done):
            argv += ["--ro-bind-try", str(resolv), str(resolv)]
    return argv


def _announced_sockets() -> list[Path]:
    """The Unix sockets the environment points commands at: ssh and gpg agents,
    docker, the session bus."""
    found: list[Path] = []
    for name in ("SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DOCKER_HOST",
                 "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"):
        value = os.environ.get(name, "")
        for part in value.replace(";", ",").split(","):
            part = part.split(":", 1)[1] if part.startswith("unix:") else part
            part = part.split("path=", 1)[1] if part.startswith("path=") else part
            part = part.removeprefix("//")  # unix:///var/run/docker.sock
            path = part.split(":", 1)[0]  # GPG_AGENT_INFO is path:pid:1
            if path.startswith("/"):
                found.append(Path(path).resolve())
    return found
