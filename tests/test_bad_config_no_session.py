"""A configuration that cannot run (``--provider openai`` without a key) creates no
session: one clear line, exit 1, nothing in the list."""

from __future__ import annotations

from pathlib import Path

from tests.support.resume import cli


def test_exec_without_a_key_creates_no_session(home: Path, project: Path) -> None:
    out = cli(home, project, "exec", "--provider", "openai", "hello")
    assert out.returncode == 1
    assert "OPENAI_API_KEY" in out.stderr and "Traceback" not in out.stderr
    listed = cli(home, project, "sessions", "--all-projects")
    assert listed.stdout.strip() == "no sessions yet"
