"""ASCII glyphs (``MTTUI_ASCII``) of the same width, and the status bar's spinner with
the seconds of the run."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from mttui.session.models import SessionStatus
from mttui.widgets.badges import badges
from mttui.widgets.glyphs import ASCII, UNICODE, glyph
from mttui.widgets.status import StatusBar, state_label


def test_ascii_glyphs_keep_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MTTUI_ASCII", "1")
    assert glyph("pause") == "="
    status = SessionStatus(awaiting_approval=True, interrupted_tools=1, queued=2,
                           corrupt_lines=1)
    text = badges(status).plain
    assert text.isascii()
    monkeypatch.setenv("MTTUI_ASCII", "0")
    assert cell_len(badges(status).plain) == cell_len(text)
    for name in UNICODE:
        assert cell_len(UNICODE[name]) == cell_len(ASCII[name]) == 1


def test_the_status_bar_counts_the_seconds_of_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MTTUI_ASCII", "1")
    bar = StatusBar(provider="offline", model="offline", approval="ask", token_limit=1000)
    clock = [100.0]
    monkeypatch.setattr("mttui.widgets.status.time.monotonic", lambda: clock[0])
    bar.watch_state("idle", "running")
    clock[0] += 17.4
    assert bar.elapsed() == 17
    label, _ = state_label("running", 0, 17)
    assert label == "| running 17s"
    assert state_label("idle", 3, 0)[0] == "o idle"
    bar.watch_state("running", "idle")
    assert bar.elapsed() == 0
