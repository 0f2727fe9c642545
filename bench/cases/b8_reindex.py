"""B8: ``reindex`` throughput, over the synthetic corpus and over agent-shaped data
(tool calls with source code and logs as output, CJK, messages from a few bytes to
tens of KB: bench/agent_data.py), measured while building each (no index yet). The
agent-shaped data is then rebuilt over the index it has: with nobody else holding it
open (the build is renamed in, as with no index); while another mttui process has it
open and sits idle, as a TUI nobody types into does (it lets go of the index after a
second, and the build is renamed in); while another mttui process keeps reading it
(it lets go when the rebuild says it waits for the index); and beside a connection
that never lets go (the build is then copied into the live file page by page, so
that the other connection sees one or the other)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mttui.session.models import ReindexResult

from ..context import Context, DataSet
from ..timing import Row

CASE = "B8"

# Another process with the index open, as mttui opens it: idle, or reading every 50 ms;
# or with a connection of its own that never lets go ("held").
HOLDER = r"""
import sys, time
from pathlib import Path
from mttui.session.index.schema import connect
from mttui.session.service import SessionService
service = SessionService(Path(sys.argv[1]), Path(sys.argv[2]))
service.list_sessions()
if sys.argv[3] == "held":
    held = connect(service.layout.index_path)
print("open", flush=True)
if sys.argv[3] == "reading":
    import select
    while not select.select([sys.stdin], [], [], 0.05)[0]:
        service.list_sessions()
sys.stdin.readline()
"""


def _row(label: str, data: DataSet, result: ReindexResult | None = None) -> Row:
    result = result or data.reindex
    rate = result.messages / result.seconds
    mb = data.text_bytes / 1e6
    return Row(f"B8 reindex {result.messages:,} messages{label} ({mb:,.0f} MB of text)", "—",
               f"{rate:,.0f} msg/s ({result.seconds:.1f} s, {mb / result.seconds:.1f} MB/s)",
               "—", "≥ 10,000 msg/s", rate >= 10_000)  # fmt: skip


def _held(data: DataSet, how: str) -> tuple[ReindexResult, str]:
    """A rebuild while another process has the index open, ``how``: idle, reading or held;
    and how the build was put in place, seen from the live file's inode."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(data.home), str(data.project),
                               how], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdin is not None
        if holder.stdout.readline().strip() != "open":
            raise RuntimeError("the process holding the index did not start")
        before = data.service.layout.index_path.stat().st_ino
        result = data.service.reindex()
        renamed = data.service.layout.index_path.stat().st_ino != before
        holder.stdin.write("done\n")
        holder.stdin.flush()
        holder.wait(60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    data.service.list_sessions()
    return result, "renamed in" if renamed else "copied in"


def run(ctx: Context) -> list[Row]:
    agent = ctx.agent()
    again = agent.service.reindex()
    agent.service.list_sessions()  # its catch-up, as after the first build
    held = {how: _held(agent, how) for how in ("idle", "reading", "held")}
    label = {"idle": "open in an idle mttui", "reading": "read all along by another mttui",
             "held": "held open by a connection that never lets go"}
    return [_row("", ctx.corpus()), _row(", agent-shaped", agent),
            _row(", agent-shaped, over its index", agent, again),
            *(_row(f", agent-shaped, over its index {label[how]} ({way})", agent, result)
              for how, (result, way) in held.items())]
