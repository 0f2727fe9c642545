"""The pace of a stream's draws follows what a draw costs, the screen's paint included:
a slow paint (a busy machine, a big terminal) is drawn less often, so keys stay ahead."""

from __future__ import annotations

import time

from textual.strip import Strip

from mttui.graph import events as ev
from mttui.widgets.history import HistoryView
from mttui.widgets.live import FLUSH, MAX_FLUSH, LiveTranscript
from tests.support.tui import SIZE, HistoryHost, settle, wait_for

PAINT_LINE = 0.004  # seconds each painted line of the history costs here


class SlowPaint(HistoryView):
    def render_line(self, y: int) -> Strip:
        time.sleep(PAINT_LINE)  # a paint that costs what Textual's compositor can
        return super().render_line(y)


async def test_a_slow_paint_makes_the_draws_of_a_stream_rarer() -> None:
    app = HistoryHost(SlowPaint)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(SlowPaint)
        view.load_newest()
        await settle(pilot)
        live = LiveTranscript(view)
        painted = []
        paint = view.render_line

        def counted(y: int) -> Strip:
            painted.append(y)
            return paint(y)

        view.render_line = counted  # type: ignore[method-assign]
        for i in range(40):
            live.apply(ev.TextDelta("a1", f"word{i} "))
        assert live._timer is not None  # a draw is due
        # the draw, its paint, then its cost taken (a poll: the limit bounds a hang)
        await wait_for(pilot, lambda: live._interval != FLUSH, limit=30)
        assert painted, "the stream was not drawn"
        # one paint of the view's lines took len(painted) * PAINT_LINE at least; the
        # next draw waits three times what the draw cost, paint included
        rows = view.scrollable_content_region.height
        assert live._interval >= min(MAX_FLUSH, 3 * rows * PAINT_LINE) > FLUSH
