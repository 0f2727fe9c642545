"""The ``@`` file list on a big tree: ``python -m bench.file_list [--files 50000]``.

Builds a git work tree of N files (a tenth of them under an ignored ``build/``),
then times reading the list (``git ls-files``, ``.gitignore`` honoured) and
ranking it for a few queries as they are typed. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mttui.core.project_files import ProjectFiles, walk_files

QUERIES = ["p", "pa", "par", "parser", "src/mod", "zzzz"]


def build_tree(root: Path, count: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("build/\n")
    ignored = count // 10
    for i in range(count):
        top = "build" if i < ignored else f"src/mod{i % 50}"
        d = root / top / f"pkg{i % 200}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file_{i}_{'parser' if i % 97 == 0 else 'util'}.py").write_text("")


def timed(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.file_list", description=__doc__)
    parser.add_argument("--files", type=int, default=50_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mttui-files-") as tmp:
        root = Path(tmp)
        build_tree(root, args.files)
        files = ProjectFiles(root)
        rows = [("read the list (git, all untracked)", timed(files.load, 3), len(files.files))]
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        rows.append(("read the list (git, all tracked)", timed(files.load, 3),
                     len(files.files)))
        rows.append(("read the list (walk, no git)", timed(lambda: walk_files(root), 3),
                     len(walk_files(root))))
        for q in QUERIES:
            rows.append((f"rank {q!r}", timed(lambda q=q: files.rank(q)), len(files.rank(q))))
    print("| step | median ms | results |\n|---|---|---|")
    for name, ms, n in rows:
        print(f"| {name} | {ms:.1f} | {n} |")
    print(f"\n{args.files} files ({args.files // 10} ignored under build/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
