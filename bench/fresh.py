"""Timing ``mttui`` commands in a fresh interpreter, as a user runs them.

An installed package has its bytecode cached; a checkout run with
``PYTHONDONTWRITEBYTECODE`` compiles every module on every start, which is not
what a user pays. The commands run with a bytecode cache of their own (under the
benchmark's temp dir, warmed by a first run), and the same interpreter starting
and doing nothing is timed beside them: that part is not mttui's to cut.

They run in a virtual environment, as the README installs mttui for a user
(``python3 -m venv .venv && pip install .``): the interpreter that runs the
benchmark may start with ``.pth`` hooks that such a user does not have (a
checkout's editable install imports a finder at every start; a host may inject
certificates), and here those cost 30 ms of every start. The environment holds
no copies: a path file puts mttui's source and the running interpreter's
site-packages on its path, without running their hooks.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import sysconfig
import time
import venv
from pathlib import Path

import mttui

VENV = "user-venv"


def user_python(root: Path) -> str:
    """The interpreter of a virtual environment under ``root`` that imports mttui and
    its dependencies as a ``pip install .`` into a fresh venv does (made once)."""
    env_dir = root / VENV
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
        purelib = sysconfig.get_path("purelib", vars={"base": str(env_dir),
                                                      "platbase": str(env_dir)})
        source = Path(mttui.__file__).resolve().parent.parent
        found = [p for p in sys.path if p and Path(p).name in ("site-packages", "dist-packages")
                 and Path(p).is_dir()]  # fmt: skip
        # A path file's plain lines only extend sys.path; the hooks of those
        # directories' own .pth files are not run (site runs them for its own dirs).
        (Path(purelib) / "mttui-bench.pth").write_text(
            "\n".join([str(source), *found]) + "\n", encoding="utf-8")
    return str(python)


def bytecode_env(cache: Path, home: Path | None = None) -> dict[str, str]:
    """This environment with a bytecode cache under ``cache`` (as an installed package
    has), and ``MTTUI_HOME`` when ``home`` is given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    if home is not None:
        env["MTTUI_HOME"] = str(home)
    return env


def _median(cmd: list[str], cwd: Path, env: dict[str, str], repeats: int) -> float:
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)  # warms the cache
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare_interpreter(root: Path, repeats: int) -> float:
    """Median time of ``python -c pass`` (the interpreter's own start)."""
    return _median([user_python(root), "-c", "pass"], root, bytecode_env(root / "pycache"),
                   repeats)


def fresh_cli(root: Path, home: Path, project: Path, args: list[str], repeats: int) -> float:
    """Median time of ``mttui ARGS`` (``python -m mttui.cli``) in a new interpreter."""
    cmd = [user_python(root), "-m", "mttui.cli", *args]
    return _median(cmd, project, bytecode_env(root / "pycache", home), repeats)


def until_ready(code: str, args: list[str], cache: Path, timeout: float = 120) -> float:
    """Seconds from starting ``python -c CODE ARGS`` (bytecode cached under ``cache``,
    no animations) until it writes ``ready``; the child is then waited for."""
    env = dict(bytecode_env(cache), TEXTUAL_ANIMATIONS="none")
    begin = time.perf_counter()
    proc = subprocess.Popen([user_python(cache.parent), "-c", code, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - begin
    proc.wait(timeout=timeout)
    if line.strip() != b"ready":
        raise RuntimeError(f"the child never got ready ({' '.join(args)}): {line!r}")
    return elapsed


def until_lines(code: str, args: list[str], cache: Path, count: int,
                timeout: float = 300) -> list[float]:
    """Seconds from starting ``python -c CODE ARGS`` (as ``until_ready``) until each of
    its first ``count`` lines; the child is then waited for."""
    env = dict(bytecode_env(cache), TEXTUAL_ANIMATIONS="none")
    begin = time.perf_counter()
    proc = subprocess.Popen([user_python(cache.parent), "-c", code, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    times = []
    for _ in range(count):
        if not proc.stdout.readline():
            proc.kill()
            raise RuntimeError(f"the child ended early ({' '.join(args)})")
        times.append(time.perf_counter() - begin)
    proc.wait(timeout=timeout)
    return times
