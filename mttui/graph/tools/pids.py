"""A pids limit for a sandboxed command, so that a fork bomb ends the call at once.

Three layers, because none holds everywhere:

- ``RLIMIT_NPROC`` set inside the sandbox's user namespace (``ulimit -u``): the kernel
  counts it per user and namespace, so it caps the sandbox alone — but never root
  (the kernel exempts uid 0 from it, capabilities or not);
- a pids cgroup (v1 ``pids`` hierarchy, or v2 where ``pids`` is delegated) when this
  process may create one: it caps root too;
- :class:`Watch`: the tasks under the command counted every quarter second; at the
  limit (or when the cgroup refused a fork) the call is killed, instead of idling at
  the cap until the timeout.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path

PIDS_MAX = 1024  # tasks (processes and threads) one sandboxed call may have
CHECK_EVERY = 0.25
_serial = itertools.count()


def ulimit_wrapper(limit: int) -> list[str]:
    """Argv that sets ``RLIMIT_NPROC`` inside the sandbox, then runs the rest."""
    return ["bash", "-c", f'ulimit -u {int(limit)} 2>/dev/null; exec "$@"', "mttui-sandbox"]


class Cgroup:
    """A pids cgroup of its own for one call; :meth:`create` gives ``None`` when the
    system does not let this process make one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limit: int) -> Cgroup | None:
        for parent in _candidates():
            _remove_stale(parent)
            path = parent / f"mttui-{os.getpid()}-{next(_serial)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(f"{int(limit)}\n")
                return cls(path)
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
        return None

    def join_prefix(self) -> list[str]:
        """Argv that moves itself into the cgroup, then execs the rest (nothing it
        starts can run outside). Should the move fail, the watch counts on its own."""
        return ["sh", "-c", 'echo $$ 2>/dev/null > "$0"; exec "$@"',
                str(self.path / "cgroup.procs")]

    def refused(self) -> bool:
        """Whether a fork was refused for the limit."""
        try:
            text = (self.path / "pids.events").read_text()
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip() not in ("", "0"):
                return True
        return False

    def current(self) -> int:
        """Tasks in the cgroup now."""
        try:
            return int((self.path / "pids.current").read_text())
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        """Remove the cgroup (its tasks are gone or going: retry briefly)."""
        for _ in range(40):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)


def _remove_stale(parent: Path) -> None:
    """Remove the cgroups left by an mttui that was killed (their pid is gone)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("mttui-")]
    except OSError:
        return
    for name in names:
        pid = name.split("-")[1]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            with contextlib.suppress(OSError):
                (parent / name).rmdir()


def _candidates() -> list[Path]:
    """Our own pids cgroup directories where a child could be made (v1, then v2)."""
    found: list[Path] = []
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    paths: dict[str, str] = {}
    for line in own:
        _, controllers, rel = line.split(":", 2)
        for name in controllers.split(",") if controllers else ["<v2>"]:
            paths[name] = rel
    for line in mounts:
        fields = line.split()
        if " - " not in line:
            continue
        after = line.split(" - ", 1)[1].split()
        fstype, opts = after[0], after[2] if len(after) > 2 else ""
        point = Path(fields[4])
        if fstype == "cgroup" and "pids" in opts.split(",") and "pids" in paths:
            found.insert(0, point / paths["pids"].lstrip("/"))
        elif fstype == "cgroup2" and "<v2>" in paths:
            base = point / paths["<v2>"].lstrip("/")
            with contextlib.suppress(OSError):
                if "pids" in (base / "cgroup.subtree_control").read_text().split():
                    found.append(base)
    return found


def tasks_under(pid: int) -> int:
    """Tasks (threads included) of ``pid`` and everything below it, from /proc."""
    children: dict[int, list[int]] = {}
    threads: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        try:
            ppid, count = int(rest[1]), int(rest[17])
        except (IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
        threads[int(name)] = count
    total, todo = 0, [pid]
    while todo:
        here = todo.pop()
        total += threads.get(here, 0)
        todo.extend(children.get(here, ()))
    return total


def _sandbox_procfs(pid: int) -> Path | None:
    """The ``/proc`` of the sandbox started as ``pid`` (bwrap), seen from here: its one
    child is the PID namespace's init, and that namespace's procfs lists only it."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    if len(kids) != 1:
        return None
    procfs = Path(f"/proc/{kids[0]}/root/proc")
    try:
        os.listdir(procfs)
    except OSError:
        return None
    return procfs


def processes_in(procfs: Path) -> int:
    """Processes of a PID namespace: one directory listing, however busy it is."""
    try:
        return sum(name.isdigit() for name in os.listdir(procfs))
    except OSError:
        return 0


class Watch:
    """Checks one running call against the pids limit, every :data:`CHECK_EVERY` s.

    Counting must stay cheap while a fork bomb runs: the cgroup's counter, else one
    listing of the sandbox's own ``/proc``; reading every task's stat (the last
    resort) takes seconds once thousands of processes are being forked."""

    def __init__(self, pid: int, limit: int, cgroup: Cgroup | None) -> None:
        self.pid, self.limit, self.cgroup = pid, limit, cgroup
        self.last = 0.0
        self.procfs: Path | None = None

    def over(self) -> bool:
        now = time.monotonic()
        if now - self.last < CHECK_EVERY:
            return False
        self.last = now
        in_cgroup = self.cgroup.current() if self.cgroup is not None else 0
        if self.cgroup is not None and in_cgroup > 0:  # cheap: the kernel counts for us
            return self.cgroup.refused() or in_cgroup >= self.limit - 2
        if self.procfs is None:
            self.procfs = _sandbox_procfs(self.pid)
        if self.procfs is not None:
            return processes_in(self.procfs) >= self.limit - 2
        return tasks_under(self.pid) >= self.limit - 2
