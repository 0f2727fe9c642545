"""B4: cold start of the TUI until the session browser is interactive.

Each start is a fresh interpreter (imports are the cost). The clock runs from
``Popen`` until the child reports that the browser shows its first page of
sessions; the baseline is the same app after importing LangGraph and
langchain-openai eagerly. Measured quiet, and again beside a CPU-bound process
(what a start feels like while a build or the test suite runs).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from ..context import Context, DataSet
from ..fresh import until_ready
from ..timing import Row, fmt_time

CASE = "B4"

CHILD = r"""
import os, sys
eager = sys.argv[3] == "eager"
if eager:
    import langgraph.graph  # noqa: F401
    from langchain_openai import ChatOpenAI  # noqa: F401
from pathlib import Path
from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.screens.browser import BrowserScreen
from mttui.session.service import SessionService

async def pilot(p):
    app = p.app
    while True:
        screen = app.screen
        if isinstance(screen, BrowserScreen) and screen.table.sessions and screen.table.row_count:
            break
        await p.pause(0.001)
    os.write(1, b"ready\n")
    app.exit()

service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
app = MttuiApp(service, Settings(), warm_up=not eager)
app.run(headless=True, size=(120, 36), auto_pilot=pilot)
"""


def _start(home: Path, project: Path, mode: str) -> float:
    return until_ready(CHILD, [str(home), str(project), mode], home.parent / "pycache",
                       timeout=60)


BUSY = "while True: pass"  # a CPU-bound process beside the start (one of the two cores)


def _measure(data: DataSet, repeats: int) -> tuple[float, float]:
    lazy, eager = [], []
    _start(data.home, data.project, "lazy")  # fills the bytecode cache
    _start(data.home, data.project, "eager")
    for _ in range(repeats):  # interleaved, so noise hits both alike
        lazy.append(_start(data.home, data.project, "lazy"))
        eager.append(_start(data.home, data.project, "eager"))
    return statistics.median(lazy), statistics.median(eager)


def run(ctx: Context) -> list[Row]:
    data = ctx.many()
    repeats = max(3, ctx.params["repeats"] // 3)
    mine, base = _measure(data, repeats)
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        busy_mine, busy_base = _measure(data, repeats if ctx.size == "full" else 1)
    finally:
        busy.kill()
        busy.wait()
    what = f"B4 TUI start to interactive browser, {len(data.files):,} sessions"
    return [Row(f"{what}, quiet", fmt_time(base), fmt_time(mine), f"{base / mine:.1f}× faster",
                "≤ 300 ms", mine <= 0.3),
            Row(f"{what}, beside a CPU-bound process", fmt_time(busy_base),
                fmt_time(busy_mine), f"{busy_base / busy_mine:.1f}× faster", "≤ 600 ms",
                busy_mine <= 0.6)]  # fmt: skip
