"""B17: the first send on a long session — open it, resume it, send a message, until the
request reaches the model (the scripted OpenAI-compatible server).

The long session is B1's size (1 000 000 messages at full size) in the shape of a
session that kept talking to its model: every turn in a run, a compression every
1 000 messages, and a checkpoint holding the model's view since the last one. The
cost must be flat in history length. The baseline is a 2 000-message session of the
same shape, in the same run, interleaved: the same view since the last compression,
far less history (a 10-message session is shown beside it: a view of 10 messages
costs less to load and send, whatever the history).

Timed two ways: in-process through the core use case the TUI and ``mttui exec`` both
call (``SessionHandle.open`` + ``drive.send``, a new ``SessionService`` each time,
imports already paid), and as a fresh ``mttui exec --session S PROMPT`` (bytecode
cached, like an installed package). Then the first request of ``mttui exec PROMPT``
(a new session) against a bare LangGraph ReAct agent script with ``SqliteSaver`` on
the same server, both fresh processes: the clock runs from starting the process until
the server has the request.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support import fake_openai as fo

from ..context import Context
from ..data import checkpoint_view, make_home
from ..fresh import bytecode_env, user_python
from ..timing import Row, fmt_time

CASE = "B17"
TEXT = "and now the next step, please"
EVERY = 1000  # a compression every so many messages (as in Context.big_compressed)

BARE_AGENT = r"""
import sqlite3, sys
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

@tool
def read_file(path: str) -> str:
    '''Read a file of the project.'''
    return open(path).read()

model = ChatOpenAI(model="bench", base_url=sys.argv[1], api_key="bench", max_retries=0,
                   streaming=True)
saver = SqliteSaver(sqlite3.connect(sys.argv[2], check_same_thread=False))
agent = create_react_agent(model, [read_file], checkpointer=saver)
agent.invoke({"messages": [HumanMessage(sys.argv[3])]},
             {"configurable": {"thread_id": "bench"}}, durability="sync")
"""


# Prefixed to each child: the time spent importing (top-level imports, any thread) and
# the time since this line ran, written to $B17_SPLIT when the first socket connects
# (the request to the server): the split of a fresh process's time to its first request.
SPLIT = r"""
import os, socket, threading, time, importlib._bootstrap as _boot
_t0, _imported, _depth = time.perf_counter(), [0.0], threading.local()
_load = _boot._find_and_load
def _timed_load(name, import_):
    if getattr(_depth, "n", 0):
        return _load(name, import_)
    _depth.n, began = 1, time.perf_counter()
    try:
        return _load(name, import_)
    finally:
        _imported[0] += time.perf_counter() - began
        _depth.n = 0
_boot._find_and_load = _timed_load
_connect = socket.socket.connect
def _first_connect(self, address, _done=[]):
    if not _done:
        _done.append(True)
        with open(os.environ["B17_SPLIT"], "w") as fh:
            fh.write(f"{_imported[0]} {time.perf_counter() - _t0}")
    return _connect(self, address)
socket.socket.connect = _first_connect
"""
MTTUI = SPLIT + r"""
import runpy, sys
sys.argv[0] = "mttui"
runpy.run_module("mttui.cli", run_name="__main__")
"""


class _Server(fo.FakeOpenAI):
    """The scripted server, noting when each request arrived (``perf_counter``)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[float] = []

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        self.arrived.append(time.perf_counter())
        return super().next_reply(body, headers)

    def first_after(self, start: float) -> float:
        """Seconds from ``start`` to the first request that came after it."""
        with self.lock:
            return min(t for t in self.arrived if t >= start) - start


def _settings(url: str) -> Any:
    from mttui.config import load_settings

    return load_settings({"provider": "openai", "base_url": url, "api_key": "bench",
                          "model": "bench", "approval": "ask"}).with_overrides(max_retries=0)


def _in_process(server: _Server, home: Path, project: Path, sid: str) -> float:
    from mttui.core.drive import send
    from mttui.core.handle import SessionHandle
    from mttui.session.service import SessionService

    start = time.perf_counter()
    handle = SessionHandle.open(SessionService(home, project), _settings(server.url), sid)
    try:
        outcome = send(handle, TEXT, emit=lambda _: None, ask=lambda _: None)
    finally:
        handle.close()
    assert outcome.status == "completed", outcome
    return server.first_after(start)


def _env(root: Path, home: Path, url: str) -> dict[str, str]:
    env = bytecode_env(root / "pycache", home)
    env.update(OPENAI_API_KEY="bench", MTTUI_CONFIG=str(root / "no-config.toml"))
    for key in ("MTTUI_DEBUG", "MTTUI_PROVIDER", "MTTUI_MODEL", "OPENAI_BASE_URL"):
        env.pop(key, None)
    return env


def _fresh(server: _Server, cmd: list[str], cwd: Path, env: dict[str, str]
           ) -> tuple[float, float, float]:
    """Seconds to the first request, and of those: importing, and everything else after
    the interpreter started (the rest is the interpreter's own start)."""
    split = cwd / "b17-split.txt"
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env={**env, "B17_SPLIT": str(split)},
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[3:6])}… failed ({done.returncode}): {done.stderr}")
    imported, since = (float(x) for x in split.read_text().split())
    return server.first_after(start), imported, since - imported


def _exec(server: _Server, root: Path, home: Path, project: Path, *args: str
          ) -> tuple[float, float, float]:
    cmd = [user_python(root), "-c", MTTUI, "exec", "--provider", "openai", "--model", "bench",
           "--base-url", server.url, *args]  # fmt: skip
    return _fresh(server, cmd, project, _env(root, home, server.url))


def _bare(server: _Server, root: Path, n: int) -> tuple[float, float, float]:
    db = root / f"bare-{n}.sqlite"
    cmd = [user_python(root), "-c", SPLIT + BARE_AGENT, server.url, str(db), TEXT]
    return _fresh(server, cmd, root, _env(root, root / "bare-home", server.url))


def _split(runs: list[tuple[float, float, float]]) -> str:
    total, imports, rest = (statistics.median(r[i] for r in runs) for i in range(3))
    return (f"{fmt_time(total)} (imports {fmt_time(imports)}, other work {fmt_time(rest)}, "
            f"interpreter start {fmt_time(total - imports - rest)})")


def _row(label: str, base: list[float], mine: list[float], what: str, *,
         info: bool = False) -> Row:
    b, m = statistics.median(base), statistics.median(mine)
    if info:
        return Row(label, f"{fmt_time(b)} ({what})", fmt_time(m), f"{m / b:.2f}×", "—", None)
    return Row(label, f"{fmt_time(b)} ({what})", fmt_time(m), f"{m / b:.2f}×",
               "flat in history length (≤ 1.5×)", m <= 1.5 * b)


def _session(root: Path, n: int) -> tuple[Path, Path, str]:
    """A home with one session of ``n`` messages shaped like the long one, checkpointed."""
    from mttui.session.service import SessionService

    home, project, [one] = make_home(root, sessions=1, messages_per_session=n,
                                     compress_every=EVERY)  # fmt: skip
    SessionService(home, project).reindex()
    checkpoint_view(home, project, one.session_id)
    return home, project, one.session_id


def run(ctx: Context) -> list[Row]:
    big = ctx.big_compressed()
    [long] = big.files
    checkpoint_view(big.home, big.project, long.session_id)
    root = ctx.root / "b17"
    # the same view since the last compression as the long session, far less history
    same = _session(root / "same-view", 2 * EVERY)
    tiny = _session(root / "chat10", 10)
    lng = (big.home, big.project, long.session_id)
    full = ctx.size == "full"
    repeats = 9 if full else 2
    server = _Server()
    rows = []
    try:
        times: dict[str, list[float]] = {"same": [], "tiny": [], "long": []}
        for r in range(repeats + 1):  # interleaved; the first round warms imports
            for key, (home, project, sid) in (("same", same), ("tiny", tiny), ("long", lng)):
                took = _in_process(server, home, project, sid)
                if r:
                    times[key].append(took)
        label = f"B17 first send on {long.messages:,} messages, in-process (open, resume, send"
        rows.append(_row(f"{label} → request)", times["same"], times["long"],
                         f"{2 * EVERY:,} messages, same view"))
        rows.append(_row("B17 (info) the same against a 10-message session", times["tiny"],
                         times["long"], "10 messages", info=True))
        fresh_repeats = 5 if full else 1
        small, large = [], []
        new: list[tuple[float, float, float]] = []
        bare: list[tuple[float, float, float]] = []
        # the first round fills the bytecode cache (a small run keeps one round: smoke only)
        for r in range(fresh_repeats + 1 if full else 1):
            s = _exec(server, root, same[0], same[1], "--session", same[2], TEXT)
            b = _exec(server, root, big.home, big.project, "--session", long.session_id, TEXT)
            n = _exec(server, root, tiny[0], tiny[1], TEXT)
            a = _bare(server, root, r)
            if r or not full:
                small.append(s[0])
                large.append(b[0])
                new.append(n)
                bare.append(a)
        rows.append(_row(f"B17 first send on {long.messages:,} messages, fresh "
                         "`mttui exec --session S`", small, large,
                         f"{2 * EVERY:,} messages, same view"))
        mine, base = (statistics.median(r[0] for r in x) for x in (new, bare))
        rows.append(Row("B17 `mttui exec PROMPT` (new session), fresh process → first request",
                        f"bare LangGraph agent script {_split(bare)}", _split(new),
                        f"{mine / base:.2f}×", "—", None))  # fmt: skip
    finally:
        server.close()
    return rows
