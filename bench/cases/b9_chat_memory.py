"""B9: memory of the chat screen showing a huge session, after scrolling to the top
and back, against the same screen showing a 10-message session.

Each measurement is a fresh interpreter running the real app headless: open the
session, scroll up through many pages (keyset ``before``), jump to the start
(``home``), page down again, jump back to the newest page (``end``), then read the
resident set size.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..context import Context
from ..data import make_home
from ..timing import Row

CASE = "B9"

CHILD = r"""
import gc, os, sys
from pathlib import Path
from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.history import HistoryView

home, project, sid, pages = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def rss():
    gc.collect()
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

async def settle(p, view):
    await p.pause()
    while view.fetching:
        await p.pause(0.001)
    await p.pause()

async def pilot(p):
    app = p.app
    while not isinstance(app.screen, ChatScreen) or not app.screen.query(HistoryView):
        await p.pause(0.01)
    view = app.screen.query_one(HistoryView)
    while not view.items:
        await p.pause(0.01)
    await settle(p, view)
    most = len(view.items)
    for _ in range(pages):            # scroll up, page after page
        view.scroll_to(y=0, animate=False, immediate=True, force=True)
        await settle(p, view)
        most = max(most, len(view.items))
    view.focus()
    await p.press("home")            # the very start
    await settle(p, view)
    for _ in range(pages // 4):       # and down again for a while
        view.scroll_to(y=view.max_scroll_y, animate=False, immediate=True, force=True)
        await settle(p, view)
        most = max(most, len(view.items))
    await p.press("end")             # back to the newest page
    await settle(p, view)
    os.write(1, f"{rss()} {most} {view.oldest_seq}\n".encode())
    app.exit()

service = SessionService(Path(home), Path(project))
app = MttuiApp(service, Settings(), open_session=sid, warm_up=False)
app.run(headless=True, size=(110, 34), auto_pilot=pilot)
"""


def _measure(home: Path, project: Path, sid: str, pages: int) -> tuple[int, int]:
    env = dict(os.environ, TEXTUAL_ANIMATIONS="none")
    out = subprocess.run([sys.executable, "-c", CHILD, str(home), str(project), sid,
                          str(pages)], capture_output=True, env=env, timeout=1800)
    fields = out.stdout.split()
    if out.returncode != 0 or len(fields) != 3:
        raise RuntimeError(f"B9 child failed: {out.stderr.decode()[-500:]}")
    return int(fields[0]), int(fields[1])


def _session(root: Path, messages: int) -> tuple[Path, Path, str]:
    from mttui.session.service import SessionService

    home, project, [written] = make_home(root, sessions=1, messages_per_session=messages)
    SessionService(home, project).reindex()
    return home, project, written.session_id


def run(ctx: Context) -> list[Row]:
    big_n = 100_000 if ctx.size == "full" else 20_000
    pages = 200 if ctx.size == "full" else 40
    big = _session(ctx.root / "b9-big", big_n)
    small = _session(ctx.root / "b9-small", 10)
    base, _ = _measure(*small, pages)
    mine, most = _measure(*big, pages)
    extra = (mine - base) / 2**20
    return [Row(f"B9 chat RSS, {big_n:,} messages (up {pages} pages, home, down, end; "
                f"at most {most} items kept)",
                f"{base / 2**20:.0f} MB (10 messages)", f"{mine / 2**20:.0f} MB",
                f"+{extra:.1f} MB", "≤ +60 MB", extra <= 60)]  # fmt: skip
