"""Running sandbox probes as the test's own user and as an unprivileged one.

As root, ``nobody`` is reached with ``setpriv``; a suite that already runs as an
ordinary user runs both identities as itself (it has nothing lower to drop to).
Projects live in a world-traversable directory owned by the identity that uses it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

NOBODY = 65534
IDENTITIES = ("self", "nobody")

PROBE = """
import json, sys
from pathlib import Path
from mttui.graph.tools.sandbox import Sandbox
from mttui.graph.tools.shell import run_shell
project, command, guarded, pids, timeout = sys.argv[1:6]
box = Sandbox("workspace", pids=int(pids)) if pids != "off" else None
res = run_shell(Path(project), command, float(timeout), sandbox=box, guarded=guarded == "1")
print(json.dumps({"status": res.status, "output": res.output}))
"""


def drop(who: str) -> list[str]:
    """The argv prefix that runs a command as ``who``."""
    if who == "nobody" and os.getuid() == 0:
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return []


def owner(who: str) -> tuple[int, int]:
    if who == "nobody" and os.getuid() == 0:
        return NOBODY, NOBODY
    return os.getuid(), os.getgid()


def run_as(who: str, argv: list[str], cwd: Path, *, timeout: float = 120,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as ``who``; git needs no user config (none is read)."""
    base = dict(os.environ if env is None else env, GIT_CONFIG_GLOBAL=os.devnull,
                GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    return subprocess.run([*drop(who), *argv], cwd=cwd, env=base, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def shell_as(who: str, project: Path, command: str, *, guarded: bool = False,
             pids: int | str = 1024, timeout: float = 60,
             env: dict[str, str] | None = None) -> dict[str, Any]:
    """``run_shell`` (sandboxed unless ``pids == "off"``) as ``who``; its result."""
    done = run_as(who, [sys.executable, "-c", PROBE, str(project), command,
                        "1" if guarded else "0", str(pids), str(timeout)],
                  project, timeout=timeout + 60, env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def chown_tree(path: Path, who: str) -> None:
    uid, gid = owner(who)
    if (uid, gid) == (os.getuid(), os.getgid()):
        return
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(root, name), uid, gid)
    os.lchown(path, uid, gid)


@contextmanager
def scratch(who: str, where: str | None = None) -> Iterator[Path]:
    """A directory ``who`` owns and everyone may traverse; removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="mttui-sbx-", dir=where))
    try:
        base.chmod(0o755)
        chown_tree(base, who)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
