"""The project toolset: confinement, shell process groups, caps, exact edits, policy."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mttui.graph.tools import OUTPUT_CAP, decide, execute_tool, preview_diff, risk_of


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_read_list_search_write(project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("one\ntwo\nthree\n")
    assert execute_tool(project, "read_file", {"path": "src/a.py"}).output == "one\ntwo\nthree\n"
    part = execute_tool(project, "read_file", {"path": "src/a.py", "offset": 2, "limit": 1})
    assert part.output.startswith("two\n") and "offset=3" in part.output
    listing = execute_tool(project, "list_dir", {}).output
    assert listing.splitlines() == ["src/"]
    hits = execute_tool(project, "search_files", {"pattern": "t[wh]", "glob": "*.py"})
    assert hits.output.splitlines() == ["src/a.py:2: two", "src/a.py:3: three"]
    res = execute_tool(project, "write_file", {"path": "new/b.txt", "content": "x"})
    assert res.status == "success" and (project / "new" / "b.txt").read_text() == "x"
    bad = execute_tool(project, "search_files", {"pattern": "("})
    assert bad.status == "error" and "invalid regular expression" in bad.output


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "sub/../../outside.txt", "/etc/passwd", "link_out/secret.txt", "link_file"],
)
def test_paths_are_confined(project: Path, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (project / "sub").mkdir()
    (project / "link_out").symlink_to(outside)
    (project / "link_file").symlink_to(outside / "secret.txt")
    for tool, args in (
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "pwned"}),
        ("edit_file", {"path": path, "old": "secret", "new": "pwned"}),
        ("list_dir", {"path": path}),
    ):
        res = execute_tool(project, tool, args)
        assert res.status == "error", (tool, path, res)
        assert "outside the project" in res.output
    assert (outside / "secret.txt").read_text() == "secret"
    assert not (tmp_path / "outside.txt").exists()


def test_search_does_not_follow_symlinks_out(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("needle\n")
    (project / "link").symlink_to(outside)
    (project / "in.txt").write_text("needle\n")
    assert execute_tool(project, "search_files", {"pattern": "needle"}).output == "in.txt:1: needle"


def test_edit_file_exact_and_unique(project: Path) -> None:
    f = project / "f.txt"
    f.write_text("alpha beta alpha\n")
    twice = execute_tool(project, "edit_file", {"path": "f.txt", "old": "alpha", "new": "x"})
    assert twice.status == "error" and "occurs 2 times" in twice.output
    missing = execute_tool(project, "edit_file", {"path": "f.txt", "old": "gamma", "new": "x"})
    assert missing.status == "error" and "not found" in missing.output
    assert f.read_text() == "alpha beta alpha\n"
    ok = execute_tool(project, "edit_file", {"path": "f.txt", "old": "beta", "new": "BETA"})
    assert ok.status == "success" and f.read_text() == "alpha BETA alpha\n"


def test_output_is_capped_with_a_marker(project: Path) -> None:
    (project / "big.txt").write_text("x" * (OUTPUT_CAP + 5000))
    res = execute_tool(project, "read_file", {"path": "big.txt"})
    assert len(res.output) < OUTPUT_CAP + 200
    assert "line cut: 5256 more bytes of it not shown" in res.output
    shell = execute_tool(project, "shell", {"command": "head -c 100000 /dev/zero | tr '\\0' y"})
    assert "output truncated: 67232 more bytes" in shell.output


def test_shell_runs_in_project_and_reports_exit_code(project: Path) -> None:
    res = execute_tool(project, "shell", {"command": "pwd; echo oops >&2; exit 3"})
    assert res.status == "error"
    assert str(project.resolve()) in res.output and "oops" in res.output
    assert "[exit code 3]" in res.output


def test_shell_timeout_kills_the_whole_group(project: Path) -> None:
    cmd = "sleep 60 & echo $! > child.pid; sleep 60"
    res = execute_tool(project, "shell", {"command": cmd, "timeout": 0.5})
    assert res.status == "error" and "timed out" in res.output
    child = int((project / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while _pid_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(child)


def test_shell_stop_kills_after_grace(project: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    res = execute_tool(project, "shell", {"command": "sleep 30"}, stop=stop, grace=0.2)
    assert res.status == "interrupted" and "stopped" in res.output
    # a tool that finishes within the grace period keeps its real outcome
    stop2 = threading.Event()
    stop2.set()
    done = execute_tool(project, "shell", {"command": "echo fine"}, stop=stop2, grace=5)
    assert done.status == "success" and done.output == "fine\n"


def test_shell_does_not_see_the_api_key(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hidden-123")
    res = execute_tool(project, "shell", {"command": 'echo "[$OPENAI_API_KEY]"'})
    assert res.output == "[]\n"


def test_unknown_tool_and_bad_arguments(project: Path) -> None:
    assert "unknown tool" in execute_tool(project, "rm_rf", {}).output
    res = execute_tool(project, "read_file", {"file": "x"})
    assert res.status == "error" and "unknown argument" in res.output


def test_risk_and_policy() -> None:
    assert [risk_of(n) for n in ("read_file", "write_file", "shell", "mystery")] == [
        "low",
        "medium",
        "high",
        "medium",
    ]
    assert decide("read_file", "ask") == "run"
    assert decide("write_file", "ask") == "ask"
    assert decide("write_file", "auto-edit") == "run"
    assert decide("shell", "auto-edit") == "ask"
    assert decide("mystery", "auto-edit") == "run"
    assert decide("shell", "yolo") == "run"
    assert decide("shell", "deny") == "deny" and decide("list_dir", "deny") == "run"
    assert decide("shell", "ask", remembered={"shell"}) == "run"
    assert decide("shell", "deny", remembered={"shell"}) == "deny"


def test_diff_preview(project: Path) -> None:
    (project / "f.txt").write_text("a\nb\nc\n")
    diff = preview_diff(project, "edit_file", {"path": "f.txt", "old": "b\n", "new": "B\n"})
    assert diff is not None
    assert "--- a/f.txt" in diff and "-b" in diff and "+B" in diff
    created = preview_diff(project, "write_file", {"path": "n.txt", "content": "hi\n"})
    assert created is not None and "/dev/null" in created and "+hi" in created
    assert "no preview" in (preview_diff(project, "write_file", {"path": "../x"}) or "")
    assert preview_diff(project, "shell", {"command": "ls"}) is None
    assert (project / "f.txt").read_text() == "a\nb\nc\n"
