"""The ``mttui`` command line: a thin face of ``mttui.core`` and the session service.

Command modules are imported only when their command runs, so ``mttui sessions``
never pays for Textual or LangGraph.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
