"""B8: ``reindex`` throughput, over the synthetic corpus and over agent-shaped data
(tool calls with source code and logs as output, CJK, messages from a few bytes to
tens of KB: bench/agent_data.py), measured while building each (no index yet). The
agent-shaped data is then rebuilt over the index it has, twice: with nobody else
holding it open (the build is renamed in, as with no index), and while another
connection holds it open, as a running TUI does (the build is then copied into the
live file page by page, so that the other connection sees one or the other)."""

from __future__ import annotations

from mttui.session.models import ReindexResult
from mttui.session.service import SessionService

from ..context import Context, DataSet
from ..timing import Row

CASE = "B8"


def _row(label: str, data: DataSet, result: ReindexResult | None = None) -> Row:
    result = result or data.reindex
    rate = result.messages / result.seconds
    mb = data.text_bytes / 1e6
    return Row(f"B8 reindex {result.messages:,} messages{label} ({mb:,.0f} MB of text)", "—",
               f"{rate:,.0f} msg/s ({result.seconds:.1f} s, {mb / result.seconds:.1f} MB/s)",
               "—", "≥ 10,000 msg/s", rate >= 10_000)  # fmt: skip


def run(ctx: Context) -> list[Row]:
    agent = ctx.agent()
    again = agent.service.reindex()
    agent.service.list_sessions()  # its catch-up, as after the first build
    other = SessionService(agent.home, agent.project)
    other.list_sessions()  # holds the index open
    try:
        held = agent.service.reindex()
    finally:
        other.close()
    agent.service.list_sessions()
    return [_row("", ctx.corpus()), _row(", agent-shaped", agent),
            _row(", agent-shaped, over its index", agent, again),
            _row(", agent-shaped, over its index held open elsewhere", agent, held)]
