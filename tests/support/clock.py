"""A fixed "now" and a clock for deterministic record timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mttui.session.records import iso_timestamp

NOW = datetime(2026, 11, 29, 18, 0, 0, tzinfo=UTC)
START = NOW - timedelta(days=3)


class FrozenClock:
    """Record timestamps that advance ``step`` per record from ``START``."""

    def __init__(self, start: datetime = START, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def stamp(self, when: datetime | None = None) -> str:
        self.now += self.step
        return iso_timestamp(self.now)

    def jump(self, delta: timedelta) -> None:
        self.now += delta
