"""B12: the file snapshot taken before a run's first side-effecting tool, on a project of
10 000 files (small: 2 000), unchanged and with one file changed.

Baseline: ``git add -A && git commit`` in a plain repository holding a copy of the
same tree, measured in the same run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B12"
SIZES = {"small": 1_000, "full": 10_000}
REPEATS = 5


def _tree(root: Path, n: int) -> None:
    for i in range(n):
        d = root / f"pkg{i // 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n" + "x = 1\n" * 20)


def _git_commit(repo: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run("git add -A && git commit -q --allow-empty -m s", shell=True, cwd=repo,
                   env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def run(ctx: Context) -> list[Row]:
    from mttui.session.snapshots import ShadowRepo

    n = SIZES.get(ctx.size, SIZES["small"])
    root = ctx.root / "b12"
    project = root / "project"
    _tree(project, n)
    copy = root / "copy"
    shutil.copytree(project, copy)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "init", "-q"], cwd=copy, env=env, check=True)
    # No automatic gc: the first commit's 10 000 loose objects start one, detached, at
    # 100 % of a core for seconds after this case (B13 after it ran beside it). Its cost
    # is not on a commit's path anyway; mttui's shadow repository sets the same.
    subprocess.run(["git", "config", "gc.auto", "0"], cwd=copy, env=env, check=True)
    _git_commit(copy, env)
    repo = ShadowRepo(root / "home", project)
    repo.snapshot()  # the first one adds every file
    rows = []
    for label, change in (("unchanged", False), ("one file changed", True)):
        ours, base = [], []
        for i in range(REPEATS):
            if change:
                for tree in (project, copy):
                    (tree / "pkg000" / "mod00000.py").write_text(f"VALUE = {i}\n")
            start = time.perf_counter()
            repo.snapshot()
            ours.append(time.perf_counter() - start)
            base.append(_git_commit(copy, env))
        o, b = _median(ours), _median(base)
        target = "≤ 100 ms" if not change else "—"
        rows.append(Row(f"B12 snapshot, {n:,} files, {label}", fmt_time(b), fmt_time(o),
                        f"{b / o:,.1f}×", target, o <= 0.1 if not change else None))
    return rows
