"""Input and output hygiene of the CLI (real processes): invalid UTF-8 arguments are
refused before anything is written, terminal control bytes from model or tool text
are shown visibly in human output, exported transcripts are private files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from mttui.session.service import SessionService

ESC_TITLE = "deploy \x1b[8mrm -rf /\x1b[0m now\x07"


def run(home: Path, project: Path, *args: str | bytes,
        umask: int | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "cfg.toml")}
    env.pop("MTTUI_DEBUG", None)
    argv: list[str | bytes] = [sys.executable, "-m", "mttui.cli", "--project", str(project),
                               *args]
    return subprocess.run(argv, capture_output=True, env=env, timeout=120,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def session_with_controls(home: Path, project: Path) -> str:
    svc = SessionService(home, project)
    w = svc.create_session(provider="offline", model="offline", title=ESC_TITLE)
    for i, (role, text) in enumerate([("user", "show me \x1b]0;pwned\x07 the \x1b[31mlog"),
                                      ("assistant", "here: \x1b[2J\x9b1m cleared \u202eevil")]):
        w.append("transcript_message", message={"id": f"m{i}", "role": role,
                                                "content": text, "status": "sent"})
    sid = w.session_id
    w.close()
    return sid


def files_under(home: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted((home / "sessions").rglob("*.jsonl"))}


def test_invalid_utf8_prompt_is_a_usage_error_and_writes_nothing(home: Path,
                                                                  project: Path) -> None:
    r = run(home, project, "exec", b"fix \xff this")
    assert r.returncode == 2, r.stderr
    assert b"not valid UTF-8" in r.stderr and b"Traceback" not in r.stderr
    assert files_under(home) == {}


def test_invalid_utf8_title_and_queue_text_change_nothing(home: Path, project: Path) -> None:
    sid = session_with_controls(home, project)
    before = files_under(home)
    for args in (("rename", sid, b"bad \xfe title"), ("queue", "add", sid, b"\xff\xfe")):
        r = run(home, project, *args)
        assert r.returncode == 2 and b"not valid UTF-8" in r.stderr, (args, r.stderr)
    assert files_under(home) == before


def _assert_visible(out: bytes) -> None:
    for raw in (b"\x1b", b"\x07", "\x9b".encode(), "\u202e".encode()):
        assert raw not in out, (raw, out)


def test_human_output_shows_control_characters_visibly(home: Path, project: Path) -> None:
    sid = session_with_controls(home, project)
    for args in (("sessions",), ("history", sid), ("search", "cleared"), ("export", sid),
                 ("search", "log", "--session", sid)):
        r = run(home, project, *args)
        assert r.returncode == 0, (args, r.stderr)
        _assert_visible(r.stdout)
    r = run(home, project, "sessions")
    assert b"\\x1b[8mrm -rf /" in r.stdout  # the hidden part is there to be read


def test_json_output_keeps_the_text_exact(home: Path, project: Path) -> None:
    sid = session_with_controls(home, project)
    r = run(home, project, "sessions", "--json")
    assert json.loads(r.stdout)["sessions"][0]["title"] == " ".join(ESC_TITLE.split())
    r = run(home, project, "history", sid, "--json")
    assert "\x1b[31m" in json.loads(r.stdout)["messages"][0]["content"]


def test_exec_approval_label_cannot_hide_part_of_a_command(home: Path,
                                                          project: Path) -> None:
    r = run(home, project, "--provider", "offline", "exec",
            "!echo safe\x1b[8m; rm -rf important", "--approve", "none")
    assert r.returncode == 0, r.stderr
    _assert_visible(r.stdout + r.stderr)
    assert b"\\x1b[8m; rm -rf important" in r.stderr


def test_queue_list_shows_control_characters_visibly(home: Path, project: Path) -> None:
    sid = session_with_controls(home, project)
    assert run(home, project, "queue", "add", sid, "later \x1b[8mhidden").returncode == 0
    r = run(home, project, "queue", "list", sid)
    assert r.returncode == 0, r.stderr
    _assert_visible(r.stdout)
    assert b"\\x1b[8mhidden" in r.stdout


def test_export_to_a_file_is_private_whatever_the_umask(home: Path, project: Path,
                                                         tmp_path: Path) -> None:
    sid = session_with_controls(home, project)
    for name in ("new.md", "existing.md"):
        target = tmp_path / name
        if name == "existing.md":
            target.write_text("old")
            target.chmod(0o666)
        r = run(home, project, "export", sid, "-o", str(target), umask=0)
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert "\x1b[31m" in target.read_text()  # a file keeps the exact text
