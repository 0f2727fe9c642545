"""SVG snapshots stored under ``snapshots/`` (the ``snapshot`` fixture is in conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion
from syrupy.location import PyTestLocation
from textual.widgets import Input, TextArea

from tests.support.tui import settle

SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots" / "__snapshots__"


class RepoSVGExtension(SVGImageExtension):
    """pytest-textual-snapshot's SVG extension, writing under ``snapshots/``."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOTS / test_location.basename)


class RepoSnapshot(SnapshotAssertion):
    """``snap_compare`` asks for ``SVGImageExtension``; hand it the relocated one."""

    def use_extension(self, extension_class: Any = None) -> SnapshotAssertion:
        return super().use_extension(RepoSVGExtension)


async def quiet(pilot: Any, rounds: int = 4) -> None:
    """Settle, then remove what moves: cursor blink, toasts."""
    await settle(pilot, rounds)
    app = pilot.app
    for widget in app.screen.query(TextArea):
        widget.cursor_blink = False
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    app.clear_notifications()
    await pilot.pause()
