"""The core never imports Textual; the CLI's read side never pays for LangGraph."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True,
    )
    return {name.split(".")[0] for name in out.stdout.split()}


def _core_modules() -> list[str]:
    import pkgutil

    import mttui.graph
    import mttui.session

    names = []
    for pkg in (mttui.session, mttui.graph):
        for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            names.append(mod.name)
    return names


@pytest.mark.parametrize("package", ["mttui.session", "mttui.graph", "mttui.config"])
def test_core_packages_import_no_textual(package: str) -> None:
    imports = "\n".join(f"import {name}" for name in _core_modules() if name.startswith(package))
    loaded = _loaded_after(f"import {package}\n{imports}")
    assert "textual" not in loaded
    if package != "mttui.graph":  # httpx (under langchain-openai) brings rich; Textual never
        assert "rich" not in loaded


def test_every_core_module_was_checked() -> None:
    names = _core_modules()
    assert "mttui.session.log" in names and "mttui.session.reader" in names


def test_read_side_cli_imports_no_langgraph() -> None:
    loaded = _loaded_after("import mttui.cli, mttui.cli.read, mttui.session.service")
    assert not {"langgraph", "langchain_openai", "langchain_core", "textual"} & loaded
