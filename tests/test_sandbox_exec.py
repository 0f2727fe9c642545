"""The sandbox in real ``mttui exec`` runs: auto-edit runs a sandboxed shell command
without asking; a shell call with ``--sandbox workspace`` and no usable bwrap fails
closed in one line; the sandbox left unset without bwrap runs unsandboxed with a
warning (``{"event": "warning"}``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.resume import cli, json_events


def _no_bwrap_path(tmp_path: Path) -> str:
    """A PATH with bash but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "touch", "echo", "cat"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_auto_edit_runs_sandboxed_shell_unasked(home: Path, project: Path) -> None:
    r = cli(home, project, "exec", "--json", "--approval", "auto-edit", "--sandbox",
            "workspace", "!touch made.txt && touch /etc/mttui-should-fail")
    assert r.returncode == 0, r.stderr
    names = [e["event"] for e in json_events(r.stdout)]
    assert "approval_request" not in names
    assert (project / "made.txt").exists() and not Path("/etc/mttui-should-fail").exists()
    off = cli(home, project, "exec", "--json", "--approval", "auto-edit", "--sandbox", "off",
              "!touch other.txt")
    assert off.returncode == 3 and not (project / "other.txt").exists()


def test_fails_closed_without_bwrap(home: Path, project: Path, tmp_path: Path) -> None:
    path = _no_bwrap_path(tmp_path)
    r = cli(home, project, "exec", "--json", "--approve", "all", "!touch ran.txt",
            MTTUI_SANDBOX="workspace", PATH=path)
    assert r.returncode == 0, r.stderr
    events = json_events(r.stdout)
    assert [e["status"] for e in events if e["event"] == "tool_outcome"] == ["error"]
    assert not (project / "ran.txt").exists()
    tool = [e["message"]["content"] for e in events if e["event"] == "message"
            and e["message"]["role"] == "tool"]
    assert len(tool[0].splitlines()) == 1 and "bubblewrap" in tool[0]


def test_unset_without_bwrap_warns_and_runs(home: Path, project: Path, tmp_path: Path) -> None:
    path = _no_bwrap_path(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "MTTUI_SANDBOX"}
    assert "MTTUI_SANDBOX" not in env
    r = cli(home, project, "exec", "--json", "--approve", "all", "!touch ran.txt", PATH=path)
    assert r.returncode == 0, r.stderr
    warnings = [e["message"] for e in json_events(r.stdout) if e["event"] == "warning"]
    # (the PATH without bwrap may lack git too: file checkpoints then warn as well)
    sandbox = [w for w in warnings if "sandbox" in w]
    assert len(sandbox) == 1 and "sandbox off" in sandbox[0], warnings
    assert (project / "ran.txt").exists()
