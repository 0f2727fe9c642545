"""B16: opening a chat — a fresh ``mttui --resume S`` until its newest messages show.

Each start is a fresh interpreter, like B4. The clock runs from ``Popen`` until the
child reports that the chat screen shows its history (the newest page, the markers
and the status from the index). The baseline is the same for a 10-message session:
the cost must be flat in history length (a long session must not open slower).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from ..context import Context
from ..data import make_home
from ..fresh import until_ready
from ..timing import Row, fmt_time

CASE = "B16"

CHILD = r"""
import os, sys
from pathlib import Path
from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService

async def pilot(p):
    app = p.app
    while True:
        screen = app.screen
        if isinstance(screen, ChatScreen) and screen.history.items \
                and screen.chat.info is not None:
            break
        await p.pause(0.001)
    os.write(1, b"ready\n")
    app.exit()

service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
app = MttuiApp(service, Settings(provider="offline"), open_session=sys.argv[3])
app.run(headless=True, size=(120, 36), auto_pilot=pilot)
"""


def _open(cache: Path, home: Path, project: Path, sid: str) -> float:
    return until_ready(CHILD, [str(home), str(project), sid], cache)


def run(ctx: Context) -> list[Row]:
    big = ctx.big()
    [long] = big.files
    home, project, [short] = make_home(ctx.root / "chat10", sessions=1,
                                       messages_per_session=10)  # fmt: skip
    repeats = 1 if ctx.size == "small" else max(3, ctx.params["repeats"] // 3)  # small: smoke
    small, large = [], []
    cache = ctx.root / "pycache"  # one for both sessions, filled by the first open
    _open(cache, home, project, short.session_id)
    for _ in range(repeats):  # interleaved, so noise hits both alike
        small.append(_open(cache, home, project, short.session_id))
        large.append(_open(cache, big.home, big.project, long.session_id))
    base, mine = statistics.median(small), statistics.median(large)
    return [Row(f"B16 open a chat of {long.messages:,} messages (fresh process, first paint)",
                f"{fmt_time(base)} (10 messages)", fmt_time(mine), f"{mine / base:.2f}×",
                "flat in history length (≤ 1.5×)", mine <= 1.5 * base)]
