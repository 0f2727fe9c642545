"""Shared fixtures: every test gets its own data home and project directory.

Helpers that are not fixtures live in ``tests/support/``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.location import PyTestLocation

from mttui.session.service import SessionService
from tests.support.clock import FrozenClock
from tests.support.compression import RoutedOpenAI
from tests.support.fake_openai import FakeOpenAI, closed_port_url
from tests.support.snapshots import RepoSnapshot, RepoSVGExtension

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated ``MTTUI_HOME`` (and config file) with no provider keys set."""
    data = tmp_path / "home"
    monkeypatch.setenv("MTTUI_HOME", str(data))
    monkeypatch.setenv("MTTUI_CONFIG", str(tmp_path / "config.toml"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MTTUI_PROVIDER", "MTTUI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return data


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory to work in."""
    proj = tmp_path / "project"
    proj.mkdir()
    return proj


@pytest.fixture
def service(home: Path, project: Path) -> SessionService:
    """The session service of the test's home and project."""
    return SessionService(home, project)


@pytest.fixture
def svc(service: SessionService) -> SessionService:
    """The same service, under the short name the storage tests use."""
    return service


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> FrozenClock:
    """Deterministic record timestamps and session ids (``5e55000000NN``)."""
    clock = FrozenClock()
    counter = itertools.count(1)
    monkeypatch.setattr("mttui.session.log.iso_timestamp", clock.stamp)
    monkeypatch.setattr("mttui.session.service.new_session_id",
                        lambda: f"5e55{next(counter):08x}")
    ids = itertools.count(1)
    def new_id(prefix: str) -> str:
        return f"{prefix}-{next(ids)}"

    monkeypatch.setattr("mttui.session.records.new_id", new_id)
    monkeypatch.setattr("mttui.session.service.new_id", new_id)
    return clock


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running scripted OpenAI-compatible server."""
    server = FakeOpenAI()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def routed() -> Iterator[RoutedOpenAI]:
    """The scripted server with compression summaries answered from their own script."""
    server = RoutedOpenAI()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def closed_port() -> str:
    """A base URL where nothing listens (connection refused)."""
    return closed_port_url()


@pytest.fixture
def make_runner(home: Any, project: Any) -> Iterator[Any]:
    """``make_runner(provider="offline", url=None, approval="ask", **settings)`` → a Runner
    on a new session (or on ``writer=``) of the test's home and project."""
    from mttui.config import load_settings
    from mttui.graph.runner import Runner

    made: list[Any] = []

    def make(
        provider: str = "offline",
        *,
        url: str | None = None,
        approval: str = "ask",
        writer: Any = None,
        grace: float = 1.0,
        **overrides: Any,
    ) -> Any:
        service = SessionService(home, project)
        settings = load_settings({"provider": provider, "base_url": url, "approval": approval})
        settings = settings.with_overrides(**{"max_retries": 0, "timeout": 5.0, **overrides})
        if writer is None:
            writer = service.create_session(provider=provider, model=settings.model)
        runner = Runner(
            writer,
            settings,
            checkpoints_path=service.checkpoints_path(),
            project=project,
            grace=grace,
        )
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()
        if not runner.writer.closed:
            runner.writer.close()


@pytest.fixture
def snapshot(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """syrupy's ``snapshot`` with SVGs kept under ``snapshots/`` (see support/snapshots.py)."""
    return RepoSnapshot(
        update_snapshots=request.config.option.update_snapshots,
        extension_class=RepoSVGExtension,
        test_location=PyTestLocation(request.node),
        session=request.session.config._syrupy,  # type: ignore[attr-defined]
    )


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[Any]:
    """A private tmux server: call it with tmux's arguments (returns its stdout)."""
    import subprocess

    name = f"mttui-{os.getpid()}-{tmp_path.name}"

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True,
                              check=False).stdout

    try:
        yield run
    finally:
        run("kill-server")
