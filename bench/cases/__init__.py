"""Benchmark cases: one module per case, ``bN_name.py``, each defining

    CASE = "B1"              # the id in bench.md
    def run(ctx: Context) -> list[Row]: ...

New modules are discovered automatically; add B4–B7, B9 the same way.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import Any

_NAME = re.compile(r"^b(\d+)_\w+$")


def discover() -> dict[str, Callable[[Any], list[Any]]]:
    """``{"B1": run, …}`` in numeric order."""
    found: list[tuple[int, str, Callable[[Any], list[Any]]]] = []
    for info in pkgutil.iter_modules(__path__):
        m = _NAME.match(info.name)
        if m:
            module = importlib.import_module(f"{__name__}.{info.name}")
            found.append((int(m.group(1)), module.CASE, module.run))
    return {case: run for _, case, run in sorted(found, key=lambda f: f[0])}
