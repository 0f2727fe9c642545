"""B4: cold start of the TUI until the session browser is interactive.

Each start is ``mttui`` in a fresh interpreter, in a real (pseudo-)terminal of
120×36: the clock runs from starting the process until the terminal shows the newest
session's title, i.e. the first frame with the rows has been written
(``bench.terminal``), and keys are read from then on. The baseline is the same
command after importing LangGraph and langchain-openai eagerly. Measured quiet, and
again beside a CPU-bound process (what a start feels like while a build or the test
suite runs).

Info rows start the same app headless on 100 000 sessions: the first page, and the
end of the catch-up after it (a stat of every log), which the user does not wait for.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from ..context import Context, DataSet
from ..fresh import bare_interpreter, fresh_cli, until_lines
from ..terminal import BARE_TEXTUAL, until_shown
from ..timing import Row, fmt_signed, fmt_time

CASE = "B4"

CHILD = r"""
import os, sys
from mttui.session import gc_pause
gc_pause.pause()  # as `mttui` does: no collections until the first frame
from pathlib import Path
from mttui.session.first_page import FirstPage
from mttui.session.service import SessionService
service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
first = FirstPage(service)  # as `mttui` does: read while the app is imported
eager = sys.argv[3] == "eager"
if eager:
    import langgraph.graph  # noqa: F401
    from langchain_openai import ChatOpenAI  # noqa: F401
from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.screens.browser import BrowserScreen

async def pilot(p):
    app = p.app
    while True:
        screen = app.screen
        composed = isinstance(screen, BrowserScreen) and screen.query("SessionTable")
        if composed and screen.table.sessions and screen.table.row_count:
            break
        await p.pause(0.001)
    os.write(1, b"ready\n")
    if sys.argv[3] == "catch-up":
        while screen.fetching:  # not a busy poll: an idle app, as a user has it
            await p.pause(0.02)
        os.write(1, b"caught up\n")
    app.exit()

app = MttuiApp(service, Settings(), warm_up=not eager, first_page=first)
app.run(headless=True, size=(120, 36), auto_pilot=pilot)
"""


EAGER = "import langgraph.graph\nfrom langchain_openai import ChatOpenAI"


def _start(ctx: Context, data: DataSet, needle: str, *, eager: bool) -> float:
    return until_shown(ctx.root, data.home, data.project, needle,
                       prelude=EAGER if eager else "")  # fmt: skip


BUSY = "while True: pass"  # a CPU-bound process beside the start (one of the two cores)


def _measure(ctx: Context, data: DataSet, repeats: int, *, warm: bool = True,
             with_bare: bool = True) -> tuple[float, float, float]:
    """Medians of mttui's start, the eager baseline's and (``with_bare``, else 0) a bare
    Textual app's."""
    newest = data.service.list_sessions(limit=1).sessions[0]
    needle = (newest.title or "")[:12]  # written as is in the title column (plain words)
    assert len(needle) == 12, newest
    lazy, eager, bare = [], [], []
    if warm:  # fills the bytecode cache
        _start(ctx, data, needle, eager=False)
        _start(ctx, data, needle, eager=True)
        if with_bare:
            until_shown(ctx.root, data.home, data.project, "bare textual row", code=BARE_TEXTUAL)
    for _ in range(repeats):  # interleaved, so noise hits all three alike
        lazy.append(_start(ctx, data, needle, eager=False))
        eager.append(_start(ctx, data, needle, eager=True))
        if with_bare:
            bare.append(until_shown(ctx.root, data.home, data.project, "bare textual row",
                                    code=BARE_TEXTUAL))  # fmt: skip
    return (statistics.median(lazy), statistics.median(eager),
            statistics.median(bare) if bare else 0.0)


LARGE = {"small": 300, "full": 100_000}  # sessions of the info rows


def _large(ctx: Context) -> list[Row]:
    """100 000 sessions: the TUI's first page and the end of its catch-up, and
    ``mttui sessions`` (which catches up before it answers), each a fresh process."""
    data = ctx.many_sessions(LARGE[ctx.size])
    cache = data.home.parent.parent / "pycache"  # the one _start filled
    args = [str(data.home), str(data.project), "catch-up"]
    repeats = 1 if ctx.size == "small" else max(3, ctx.params["repeats"] // 4)
    if ctx.size != "small":
        until_lines(CHILD, args, cache, 2)  # fills the bytecode cache
    runs = [until_lines(CHILD, args, cache, 2) for _ in range(repeats)]
    first = statistics.median(r[0] for r in runs)
    caught = statistics.median(r[1] for r in runs)
    bare = bare_interpreter(ctx.root, repeats)
    listing = fresh_cli(ctx.root, data.home, data.project, ["sessions", "--limit", "50"], repeats)
    n = f"{len(data.files):,} sessions"
    return [Row(f"B4 (info) TUI start to the first page, {n}", "—", fmt_time(first), "—",
                "≤ 600 ms", first <= 0.6),
            Row(f"B4 (info) the same until its catch-up is done, {n}", "—", fmt_time(caught),
                "—", "—", None),
            Row(f"B4 (info) `mttui sessions`, fresh process, {n}", f"python -c pass "
                f"{fmt_time(bare)}", fmt_time(listing), f"+{fmt_time(listing - bare)} over the "
                "interpreter", "—", None)]  # fmt: skip


def run(ctx: Context) -> list[Row]:
    rows = _ten_thousand(ctx)
    return rows + _large(ctx)


def _ten_thousand(ctx: Context) -> list[Row]:
    data = ctx.many()
    full = ctx.size == "full"
    repeats = max(3, ctx.params["repeats"] // 3) if full else 1  # small: a smoke check
    mine, base, bare = _measure(ctx, data, repeats)
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:  # the cache is filled by now; a full run still starts each once before timing
        busy_mine, busy_base, _ = _measure(ctx, data, repeats, warm=full, with_bare=False)
    finally:
        busy.kill()
        busy.wait()
    what = f"B4 `mttui` start until its terminal shows the sessions, {len(data.files):,} sessions"
    return [Row(f"{what}, quiet", fmt_time(base), fmt_time(mine), f"{base / mine:.1f}× faster",
                "≤ 300 ms", mine <= 0.3),
            Row("B4 (info) a bare Textual app showing a 30-row table, the same terminal, quiet "
                "(its starts between mttui's)",
                "—", fmt_time(bare), f"mttui {fmt_signed(mine - bare)}", "—", None),
            Row(f"{what}, beside a CPU-bound process", fmt_time(busy_base),
                fmt_time(busy_mine), f"{busy_base / busy_mine:.1f}× faster", "≤ 600 ms",
                busy_mine <= 0.6)]  # fmt: skip
