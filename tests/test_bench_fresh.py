"""The benchmark's fresh processes start as a user's install does: mttui and the
dependencies importable, no ``.pth`` hook of the running interpreter's own dirs run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.fresh import user_python


def test_user_python_sees_the_packages_but_runs_no_host_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = tmp_path / "host" / "site-packages"  # stands for the interpreter's own dir
    host.mkdir(parents=True)
    (host / "hostdep.py").write_text("VALUE = 42\n")
    marker = tmp_path / "hook-ran"
    (host / "hook.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(host)])

    python = user_python(tmp_path / "bench")
    assert user_python(tmp_path / "bench") == python  # made once
    out = subprocess.run(
        [python, "-c", "import hostdep, mttui, textual, sys; "
         "print(hostdep.VALUE, mttui.__file__, sys.prefix != sys.base_prefix)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.split()  # fmt: skip
    import mttui

    assert out == ["42", mttui.__file__, "True"]  # this source, inside a venv
    assert not marker.exists()  # the hook of the host's dir never ran
