"""Shared fixtures: every test gets its own data home and project directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

# the scripted OpenAI-compatible server and runner fixtures (tests/fake_openai.py)
pytest_plugins = ["fake_openai"]


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
