"""Echoes of user input never drive the terminal: ``/model NAME`` with ESC and BEL,
other slash commands' echoes, error lines naming what was typed, and the TUI's
notifications and status bar show control characters as visible escapes."""

from __future__ import annotations

from pathlib import Path

from mttui.screens.chat_messages import Note
from tests.support.resume import cli, json_events

NASTY = "a\x1b[31mb\x07c\x9b"
RAW = ("\x1b", "\x07", "\x9b")


def _session(home: Path, project: Path) -> str:
    r = cli(home, project, "exec", "--json", "hello")
    assert r.returncode == 0, r.stderr
    return str(json_events(r.stdout)[0]["session_id"])


def _clean(text: str) -> bool:
    return not any(c in text for c in RAW)


def test_model_name_with_escapes_is_refused_and_shown_escaped(home: Path,
                                                               project: Path) -> None:
    sid = _session(home, project)
    r = cli(home, project, "exec", "--session", sid, f"/model {NASTY}")
    assert r.returncode != 0
    assert _clean(r.stdout + r.stderr) and "invalid model name" in r.stderr
    shown = cli(home, project, "exec", "--session", sid, "/model")
    assert _clean(shown.stdout) and NASTY not in shown.stdout


def test_other_echoes_are_escaped(home: Path, project: Path) -> None:
    sid = _session(home, project)
    r = cli(home, project, "exec", "--session", sid, f"/export out{NASTY}.md")
    assert r.returncode == 0, r.stderr
    assert "exported to" in r.stdout and "\\x1b" in r.stdout and _clean(r.stdout)
    assert (project / f"out{NASTY}.md").exists()
    missing = cli(home, project, "history", f"zz{NASTY}")
    assert missing.returncode != 0 and _clean(missing.stderr), missing.stderr
    revoke = cli(home, project, "permissions", "revoke", f"shell({NASTY})")
    assert revoke.returncode != 0 and _clean(revoke.stderr) and revoke.stderr.strip()


def test_tui_notes_and_status_show_controls_visibly() -> None:
    note = Note(f"model: {NASTY} from the next run on", "error", title=NASTY)
    assert _clean(note.text) and _clean(note.title) and "␛" in note.text
    from mttui.widgets.status import StatusBar

    bar = StatusBar(provider="openai", model=NASTY, approval="ask", token_limit=1000)
    assert _clean(bar.render().plain)
