"""The ``workspace`` sandbox: ``shell`` commands under bubblewrap (``bwrap``).

The whole file system is mounted read-only, the project directory writable, ``/tmp``
private, the network gone (unless ``sandbox_network = true``), the PID namespace new
(the agent's processes and their ``/proc/*/environ`` are invisible) and the sandbox
dies with its parent, so nothing a command forks outlives the call.

:meth:`Sandbox.prefix` gives the argv prefix the shell tool puts before
``bash -c COMMAND``; it raises :class:`SandboxUnavailable` (one line saying how to
install bwrap or turn the sandbox off) when ``bwrap`` cannot run — shell calls
then fail closed, never unsandboxed.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

HOW_TO_FIX = ("install bubblewrap (e.g. apt install bubblewrap) or turn the sandbox off "
              "(--sandbox off, MTTUI_SANDBOX=off or sandbox = \"off\" in config.toml)")


class SandboxUnavailable(RuntimeError):
    """``bwrap`` is missing or cannot create namespaces (the message is one line)."""


def _probe_argv(bwrap: str) -> list[str]:
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]


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

    def prefix(self, project: Path) -> list[str]:
        """The argv before ``bash -c COMMAND`` (empty when the sandbox is off)."""
        if not self.active:
            return []
        problem = self.problem()
        if problem is not None:
            raise SandboxUnavailable(f"sandbox: {problem}; {HOW_TO_FIX}")
        bwrap = shutil.which("bwrap") or "bwrap"
        root = str(Path(project).resolve())
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--tmpfs", "/tmp", "--bind", root, root, "--chdir", root,
                "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                "--new-session"]
        if not self.network:
            argv.append("--unshare-net")
        return [*argv, "--"]
