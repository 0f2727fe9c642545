"""B15: choosing where compression cuts, on agent-shaped histories.

Turns of a request, a tool call, its output (source code) and an answer. The
baseline is the previous selection, which estimated the kept part again for every
candidate cut (quadratic); it runs only at the smaller sizes. Target (issue):
linear, ≤ 100 ms at 100 000 messages.
"""

from __future__ import annotations

import time
from typing import Any

from ..context import Context
from ..timing import Row, fmt_time

CASE = "B15"
BUDGET = 32_000  # tokens kept


def _history(n: int) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    out: list[Any] = []
    for t in range(n // 4):
        call = {"id": f"c{t}", "name": "read_file", "args": {"path": f"src/m{t}.py"}}
        out += [
            HumanMessage(f"look at module {t}, 修复日志 {t}", id=f"h{t}"),
            AIMessage("", id=f"a{t}", tool_calls=[call]),
            ToolMessage(f"def f{t}(x):\n    return x + {t}\n" * 20, tool_call_id=f"c{t}",
                        id=f"t{t}"),
            AIMessage(f"module {t} is fine", id=f"r{t}"),
        ]  # fmt: skip
    return out


def _quadratic(messages: list[Any], budget: int) -> int | None:
    """The old selection: the kept part re-estimated for every candidate."""
    from mttui.graph.compression.cut import is_request, safe_points
    from mttui.graph.tokens import estimate_tokens

    points = [p for p in safe_points(messages) if p < len(messages) and is_request(messages[p])]
    return next((p for p in points if estimate_tokens(messages[p:]) <= budget), None)


def _time(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(ctx: Context) -> list[Row]:
    from mttui.graph.compression.cut import choose_cut

    rows = []
    sizes = (2_000, 8_000, 100_000) if ctx.size == "full" else (2_000, 20_000)
    for n in sizes:
        messages = _history(n)
        ours = min(_time(lambda m=messages: choose_cut(m, BUDGET)) for _ in range(3))
        base = _time(lambda m=messages: _quadratic(m, BUDGET)) if n <= 8_000 else None
        rows.append(Row(
            f"B15 compression cut, {n:,} messages",
            fmt_time(base) if base is not None else "— (quadratic: not run)",
            fmt_time(ours), f"{base / ours:,.0f}×" if base else "—",
            "≤ 100 ms at 100 000" if n == 100_000 else "linear",
            ours <= 0.1 if n == 100_000 else None,
        ))  # fmt: skip
    return rows
