"""The ``@`` list's files: ``.gitignore`` honoured with and without git; the ranking."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mttui.core.project_files import ProjectFiles, walk_files


def _tree(root: Path) -> None:
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    for rel in ("src/parser.py", "src/sub/deep_parser.py", "docs/parsing.md", "app.log",
                "build/out.py", "node_modules/x/index.js", "src/sub/.gitignore"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("secret.py\n" if rel.endswith(".gitignore") else "x")
    (root / "src" / "sub" / "secret.py").write_text("x")


def test_git_honours_every_gitignore(tmp_path: Path) -> None:
    _tree(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    files = ProjectFiles(tmp_path).load()
    assert "src/parser.py" in files and "docs/parsing.md" in files
    for gone in ("app.log", "build/out.py", "src/sub/secret.py"):
        assert gone not in files


def test_without_git_the_top_gitignore_and_tool_dirs(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = walk_files(tmp_path)
    assert "src/parser.py" in files
    for gone in ("app.log", "build/out.py", "node_modules/x/index.js"):
        assert gone not in files


def test_rank_name_matches_first_then_path_then_loose(tmp_path: Path) -> None:
    _tree(tmp_path)
    pf = ProjectFiles(tmp_path)
    pf.load()
    assert pf.rank("parser")[:2] == ["src/parser.py", "src/sub/deep_parser.py"]
    assert "src/sub/deep_parser.py" in pf.rank("sub")  # only in the path
    assert "docs/parsing.md" in pf.rank("prsng")  # a subsequence
    assert pf.rank("zzz") == []
    assert pf.rank("")[0] == ".gitignore"  # shallowest first
