"""Tool output and file reads stay in bounded memory; special files are refused."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

from mttui.graph.tools import OUTPUT_CAP, execute_tool
from mttui.graph.tools.capture import BoundedCapture

ROOT = Path(__file__).resolve().parents[1]


def _peak_rss_mb(code: str, cwd: Path) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; its peak RSS in MB and what it printed."""
    # VmHWM: the peak of this program (ru_maxrss would carry the forking parent's over exec)
    hwm = "[ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]"
    probe = code + f"\nprint('RSS', {hwm})\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rss = float(lines[-1].split()[1]) / 1024
    return rss, "\n".join(lines[:-1])


def test_capture_keeps_head_and_tail() -> None:
    cap = BoundedCapture(limit=10)
    for piece in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        cap.feed(piece)
    text = cap.text()
    assert text.startswith("abcde\n[output truncated: 16 more bytes not shown]\n")
    assert text.endswith("vwxyz")
    small = BoundedCapture(limit=10)
    small.feed(b"0123456789")
    assert small.text() == "0123456789"


def test_capture_cuts_on_character_boundaries() -> None:
    cap = BoundedCapture(limit=8)
    cap.feed(("é" * 20).encode())
    text = cap.text()
    assert text.startswith("éé\n[output truncated:") and text.endswith("éé")


def test_shell_output_keeps_head_and_tail(project: Path) -> None:
    cmd = "echo FIRST; head -c 200000 /dev/zero | tr '\\0' y; echo; echo LAST"
    res = execute_tool(project, "shell", {"command": cmd})
    assert res.status == "success"
    assert res.output.startswith("FIRST\n")
    assert res.output.rstrip().endswith("LAST")
    assert "output truncated:" in res.output
    assert len(res.output) < OUTPUT_CAP + 200


def test_a_gigabyte_of_shell_output_stays_in_bounded_memory(project: Path) -> None:
    code = (
        "from pathlib import Path\n"
        "from mttui.graph.tools import execute_tool\n"
        "cmd = 'head -c 1073741824 /dev/zero; echo END'\n"
        "res = execute_tool(Path('.'), 'shell', {'command': cmd})\n"
        "print(res.status, len(res.output), res.output.rstrip().endswith('END'))\n"
    )
    rss, out = _peak_rss_mb(code, project)
    assert out.startswith("success ") and out.endswith(" True")
    assert rss < 100, f"peak RSS {rss:.0f} MB for 1 GB of output"


def test_progress_reports_a_capped_tail_and_a_last_one(project: Path) -> None:
    seen: list[tuple[str, str]] = []
    cmd = (
        "for i in $(seq 1 8); do head -c 3000 /dev/zero | tr '\\0' a; "
        "echo \" line $i\"; sleep 0.1; done"
    )
    res = execute_tool(
        project, "shell", {"command": cmd}, progress=lambda c, t: seen.append((c, t)), call_id="c1"
    )
    assert res.status == "success"
    assert len(seen) >= 2  # live reports while it ran, and the last one
    assert all(call == "c1" and len(tail.encode()) <= 4096 for call, tail in seen)
    assert seen[-1][1].endswith(" line 8\n")


def test_stop_works_while_output_floods(project: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    res = execute_tool(project, "shell", {"command": "yes"}, stop=stop, grace=0.2)
    assert res.status == "interrupted" and "stopped by the user" in res.output
    assert time.monotonic() - started < 60  # it returned at all (no hang on the pipe)


def test_background_child_holding_the_pipe_does_not_hang(project: Path) -> None:
    res = execute_tool(project, "shell", {"command": "(sleep 30; echo late) & echo now"})
    assert res.status == "success" and res.output.startswith("now")


def test_read_file_streams_a_huge_file_in_bounded_memory(project: Path) -> None:
    big = project / "big.txt"
    with open(big, "wb") as fh:
        row = b"x" * 999 + b"\n"
        block = row * 1024  # 1 MB
        for _ in range(300):
            fh.write(block)
        fh.write(b"y" * (50 * 1024 * 1024))  # and one 50 MB last line
    code = (
        "from pathlib import Path\n"
        "from mttui.graph.tools import execute_tool\n"
        "res = execute_tool(Path('.'), 'read_file', {'path': 'big.txt', 'offset': 307201})\n"
        "print(res.status, res.output.splitlines()[-1][-50:])\n"
        "print(repr(execute_tool(Path('.'), 'read_file', {'path': 'big.txt'}).output[-60:]))\n"
    )
    rss, out = _peak_rss_mb(code, project)
    first, second = out.splitlines()
    assert first.startswith("success ") and "more bytes of it not shown" in first
    assert "more lines; output limit reached; read on with offset=" in second
    assert rss < 100, f"peak RSS {rss:.0f} MB reading a 350 MB file"


def test_special_files_are_refused_without_blocking(project: Path) -> None:
    os.mkfifo(project / "pipe")
    os.mknod(project / "dev", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero (as root)
    (project / "a.txt").write_text("needle\n")
    for tool, args in (("read_file", {"path": "pipe"}), ("read_file", {"path": "dev"}),
                       ("edit_file", {"path": "pipe", "old": "a", "new": "b"}),
                       ("write_file", {"path": "pipe", "content": "x"})):  # fmt: skip
        res = execute_tool(project, tool, args)
        assert res.status == "error" and "not a regular file" in res.output, (tool, res)
    # search skips them (a pipe in the tree would block every search)
    assert execute_tool(project, "search_files", {"pattern": "needle"}).output == "a.txt:1: needle"
