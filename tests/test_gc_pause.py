"""Garbage collection is paused while ``mttui`` starts and always resumed: before a
command runs, and for the TUI once its first screen is drawn."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mttui.cli.read
from mttui.cli.main import main
from mttui.session import gc_pause
from mttui.session.service import SessionService
from tests.support.tui import make_app, msg, write_session


@pytest.fixture(autouse=True)
def collecting() -> Iterator[None]:
    """Whatever a test does, the next one starts with collections on, nothing frozen."""
    yield
    gc.enable()
    gc.unfreeze()


def test_a_command_runs_with_collections(monkeypatch: pytest.MonkeyPatch, home: Path,
                                         project: Path) -> None:
    seen: list[bool] = []

    def sessions(args: object, service: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(mttui.cli.read, "cmd_sessions", sessions)
    monkeypatch.setattr(sys, "argv", ["mttui", "sessions"])  # a process start: no argv
    monkeypatch.setenv("MTTUI_HOME", str(home))
    monkeypatch.chdir(project)
    assert main() == 0
    assert seen == [True]
    assert gc.isenabled()


def test_a_failed_start_resumes_collections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["mttui", "sessions", "--project", "/nonexistent/x"])
    assert main() != 0
    assert gc.isenabled()


def test_called_from_python_it_leaves_collections_alone(home: Path, project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MTTUI_HOME", str(home))
    gc.disable()
    assert main(["sessions", "--project", str(project)]) == 0
    gc.enable()  # main() with argv resumes only what it paused: nothing


async def test_the_app_resumes_collections_after_its_first_frame(service: SessionService) -> None:
    write_session(service, "one", [msg("user", "hello", 1)])
    gc_pause.pause()
    app = make_app(service)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(50):
            if gc.isenabled():
                break
            await pilot.pause(0.01)
        assert gc.isenabled()
        assert app.screen.query_one("SessionTable").row_count == 1  # type: ignore[attr-defined]


def test_resume_freezes_what_the_start_made() -> None:
    gc_pause.pause()
    assert not gc.isenabled()
    gc_pause.resume()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc_pause.resume()  # not paused: nothing happens


def test_the_command_line_pauses_collections_while_it_imports(tmp_path: Path) -> None:
    """``python -m mttui.cli`` (the ``mttui`` script's path) pauses collections before it
    imports the session layer, and collects again before the command runs."""
    code = ("import gc, sys, mttui.cli.read as r\n"
            "def probe(args, service):\n"
            "    print(gc.isenabled(), gc.get_freeze_count() > 0); return 0\n"
            "r.cmd_sessions = probe\n"
            "import mttui.session.service as s\n"
            "orig = s.SessionService.__init__\n"
            "def init(self, *a, **k):\n"
            "    print(gc.isenabled()); orig(self, *a, **k)\n"
            "s.SessionService.__init__ = init\n"
            "from mttui.cli.main import main\n"
            "sys.argv = ['mttui', 'sessions']\n"
            "sys.exit(main())\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"MTTUI_HOME": str(tmp_path / "home"),
                                            **_env()}, check=True)  # fmt: skip
    assert out.stdout.split() == ["False", "True", "True"]


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "MTTUI_HOME"}


def test_a_run_makes_no_full_collections_young_ones_go_on() -> None:
    """While a run's events are driven, the oldest generation is never walked (0.3 s and
    more for a long chat's heap, a frozen screen while a reply streams); after it, it is
    collected as before."""
    from mttui.core.drive import drive
    from mttui.graph.events import RunEnded

    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    kept: list[list[int]] = []
    before = gc.get_threshold()

    def run() -> Iterator[RunEnded]:
        for i in range(600_000):  # survivors, as a long chat's model view: a full
            kept.append([i])  # collection would come by itself after a few hundred thousand
        yield RunEnded("r1", "completed")

    gc.callbacks.append(watch)
    try:
        outcome = drive(None, run(), emit=lambda event: None,  # type: ignore[arg-type]
                        ask=lambda request: None)
    finally:
        gc.callbacks.remove(watch)
    assert outcome.status == "completed"
    assert 0 in started and 2 not in started
    assert gc.get_threshold() == before
    kept.clear()


def test_overlapping_runs_hold_full_collections_until_the_last_ends() -> None:
    full = gc.get_threshold()[2]
    first, second = gc_pause.no_full_collections(), gc_pause.no_full_collections()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[2] > 1_000_000  # the second still goes
    second.__exit__(None, None, None)
    assert gc.get_threshold()[2] == full


async def test_the_app_lets_keys_through_other_threads_and_restores_the_interval(
    service: SessionService,
) -> None:
    before = sys.getswitchinterval()
    app = make_app(service)
    async with app.run_test(size=(100, 30)):
        assert sys.getswitchinterval() == pytest.approx(0.001)
    assert sys.getswitchinterval() == before


@pytest.mark.parametrize("overdue", [True, False])
def test_a_long_run_is_collected_between_its_steps(monkeypatch: pytest.MonkeyPatch,
                                                   overdue: bool) -> None:
    """A run that goes on for minutes still has its garbage collected fully, at the end
    of a tool step (nothing streams then), once the hold is older than ``OVERDUE``."""
    from mttui.core.drive import drive
    from mttui.graph.events import RunEnded, ToolFinished

    monkeypatch.setattr(gc_pause, "OVERDUE", 0.0 if overdue else 3600.0)
    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    def run() -> Iterator[ToolFinished | RunEnded]:
        yield ToolFinished("c1", "read_file", "success", "text")
        yield RunEnded("r1", "completed")

    gc.callbacks.append(watch)
    try:
        drive(None, run(), emit=lambda event: None, ask=lambda request: None)  # type: ignore[arg-type]
    finally:
        gc.callbacks.remove(watch)
    assert (2 in started) is overdue
