"""B13: keys while an answer streams, and the last byte to the final paint.

The chat of a session with 10 000 messages is open (Textual's test driver, a real
app, the scripted OpenAI-compatible server on 127.0.0.1, in a process of its own as a
model server is: ``bench/model_server.py``). An answer of ~8 000
tokens streams — as fast as the server sends, and at ~200 tokens/s — while keys
are typed into the prompt; each key is timed from the press until the prompt
holds it. Baseline: the same keys while idle. Then: from the answer's final
message reaching the screen to the history showing it finished. The app warms up as
`mttui` does (a second after its start it loads the agent runtime and the model
client in a thread) before the answer is asked for.

Each rate is measured in a process of its own, as a user's app runs: in the
benchmark's process, the heap left by the cases before it (millions of objects
of their data sets) made the app's garbage collections there longer.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from textual import events

from ..context import Context
from ..model_server import served
from ..timing import Row, fmt_time

CASE = "B13"
KEYS = 20


def _answer(tokens: int) -> str:
    words = []
    for i in range(tokens // 8):
        words.append(f"Step {i}: the parser reads `tok_{i}` and 修复 it.\n\n" if i % 12 == 0
                     else f"word{i} ")
    return "".join(words)


async def _until(condition: Any, step: float = 0.001) -> None:
    """Poll ``condition`` (a benchmark measures; a bounded loop, no timing assertion)."""
    for _ in range(int(120 / step)):
        if condition():
            return
        await asyncio.sleep(step)
    raise TimeoutError("condition not reached")


async def _type(pilot: Any, prompt: Any, n: int) -> list[float]:
    out = []
    for i in range(n):
        key = "abcdefghij"[i % 10]
        before = len(prompt.text)
        start = time.perf_counter()
        # The path a terminal's key takes (driver → app queue); the test driver's
        # press() would also wait for the whole process to be idle, which a stream
        # never is.
        event = events.Key(key, key)
        event.set_sender(pilot.app)
        pilot.app._driver.send_message(event)
        await _until(lambda b=before: len(prompt.text) > b, 0.0005)
        out.append(time.perf_counter() - start)
        await asyncio.sleep(0.02)
    return out


async def _measure(home: Path, project: Path, tokens: int, delay: float,
                   history: int) -> dict[str, Any]:
    from mttui.graph import events as ev
    from mttui.session.service import SessionService
    from mttui.widgets.prompt import PromptArea
    from tests.support import fake_openai as fo
    from tests.support.tui import chat_records, make_app, settings, settle, write_session

    service = SessionService(home, project)
    sid = write_session(service, "a long chat", chat_records(history))
    pieces = tokens // 2
    reply = (fo.slow(_answer(tokens), delay=delay, pieces=pieces) if delay
             else fo.text(_answer(tokens), pieces=pieces))
    result: dict[str, Any] = {}
    with served([reply]) as url:
        app = make_app(service, open_browser=False, open_session=sid, warm_up=True,
                       settings=settings(provider="openai", base_url=url, api_key="bench",
                                         auto_compress=False))
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            # as `mttui` runs: its warm-up (a second after the start) is done before the
            # first send, while the user reads and types
            await _until(lambda: app._warmed and not any(  # started, and finished (gone)
                w.group == "warm-up" for w in app.workers), 0.01)
            await settle(pilot)
            chat = app.screen
            prompt = chat.query_one("#prompt", PromptArea)
            prompt.focus()
            result["idle"] = await _type(pilot, prompt, KEYS)
            prompt.text = "write the long answer"
            finished: list[float] = []
            emit = chat.emit

            def spy(event: Any) -> None:
                if isinstance(event, ev.MessageAdded) and event.message.get("role") == "assistant":
                    finished.append(time.perf_counter())
                emit(event)

            chat.emit = spy  # type: ignore[method-assign]
            painted: list[float] = []
            update = chat.history.update_item

            def paint(item: Any) -> None:
                update(item)
                if item.kind == "assistant" and not item.streaming:
                    painted.append(time.perf_counter())

            chat.history.update_item = paint  # type: ignore[method-assign]
            await pilot.press("enter")
            await _until(lambda: chat.live.streams or finished, 0.005)  # a short one may end
            prompt.text = ""
            result["streaming"] = await _type(pilot, prompt, KEYS)
            await _until(lambda: finished and painted)
            result["final"] = painted[-1] - finished[0]
    return result


CHILD = """
import gc; gc.disable()  # as `mttui` starts (gc_pause): the app resumes and freezes it
import asyncio, json, sys
from pathlib import Path
from bench.cases.b13_stream_keys import _measure
home, project = Path(sys.argv[1]) / "home", Path(sys.argv[1]) / "project"
tokens, delay, history = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
result = asyncio.run(_measure(home, project, tokens, delay, history))
print(json.dumps(result))
"""


def _in_child(root: Path, tokens: int, delay: float, history: int) -> dict[str, Any]:
    """``_measure`` in a new interpreter (this package's checkout as its working dir)."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(tokens), str(delay),
                           str(history)], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"B13 child failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run(ctx: Context) -> list[Row]:
    rows = []
    full = ctx.size == "full"
    tokens, history = (8_000, 10_000) if full else (400, 1_000)  # small: a smoke run
    for label, delay in (("as fast as sent", 0.0), ("~200 tokens/s", 0.01)):
        root = ctx.root / f"b13-{int(delay * 1000)}"
        (root / "project").mkdir(parents=True)
        r = _in_child(root, tokens, delay, history)
        idle, busy = statistics.median(r["idle"]), statistics.median(r["streaming"])
        rows.append(Row(f"B13 key → prompt while {tokens:,} tokens stream {label} "
                        f"({history:,}-message chat; worst {fmt_time(max(r['streaming']))})",
                        fmt_time(idle), fmt_time(busy), f"{busy / idle:.1f}× idle",
                        "≤ 2× idle, no key lost", busy <= 2 * idle))
        rows.append(Row(f"B13 final message → final paint ({label})", "—", fmt_time(r["final"]),
                        "—", "≤ 0.2 s", r["final"] <= 0.2))
    return rows
