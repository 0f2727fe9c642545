"""What the cases share: the size, a temp dir, and data sets built once, on demand."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mttui.session.models import ReindexResult
from mttui.session.service import SessionService

from .agent_data import make_agent_home
from .data import Written, make_home

SIZES = {
    # corpus: sessions x messages (B2, B8, B10); big: one session (B1); many: sessions (B3)
    # agent: agent-shaped sessions x messages (B8: tool calls, source code, logs, CJK)
    "small": {"corpus": (20, 1000), "big": 20_000, "many": 500, "repeats": 5, "base_repeats": 1,
              "agent": (10, 100)},
    "full": {
        "corpus": (1000, 1000),
        "big": 1_000_000,
        "many": 10_000,
        "agent": (250, 400),
        "repeats": 21,
        "base_repeats": 3,
    },  # fmt: skip
}


@dataclass
class DataSet:
    home: Path
    project: Path
    files: list[Written]
    service: SessionService
    reindex: ReindexResult
    generate_seconds: float

    @property
    def text_bytes(self) -> int:
        return sum(f.text_bytes for f in self.files)

    @property
    def messages(self) -> int:
        return sum(f.messages for f in self.files)


def _progress(label: str):  # type: ignore[no-untyped-def]
    """A text progress bar on stderr, redrawn only when the percentage changes."""
    shown = [-1]

    def show(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        if pct == shown[0]:
            return
        shown[0] = pct
        bar = "#" * (pct * 30 // 100)
        sys.stderr.write(f"\r  {label} [{bar:.<30}] {pct:3d}%")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


@dataclass
class Context:
    size: str
    root: Path
    _cache: dict[str, DataSet] = field(default_factory=dict)

    @property
    def params(self) -> dict:  # type: ignore[type-arg]
        return SIZES[self.size]

    def _build(self, name: str, sessions: int, per_session: int,
               compress_every: int = 0) -> DataSet:
        if name not in self._cache:
            sys.stderr.write(f"generating {name}: {sessions} sessions x {per_session} messages\n")
            start = time.perf_counter()
            if name == "agent":
                home, project, files = make_agent_home(
                    self.root / name, sessions=sessions, messages_per_session=per_session)
            else:
                home, project, files = make_home(
                    self.root / name, sessions=sessions, messages_per_session=per_session,
                    compress_every=compress_every)  # fmt: skip
            generated = time.perf_counter() - start
            os.sync()  # the generator's writeback is its own cost, not the timed build's
            service = SessionService(home, project)
            result = service.reindex(_progress(f"reindex {name}"))
            service.list_sessions()  # the one automatic catch-up, outside any timing
            self._cache[name] = DataSet(home, project, files, service, result, generated)
        return self._cache[name]

    def corpus(self) -> DataSet:
        sessions, per = self.params["corpus"]
        return self._build("corpus", sessions, per)

    def agent(self) -> DataSet:
        sessions, per = self.params["agent"]
        return self._build("agent", sessions, per)

    def big(self) -> DataSet:
        return self._build("big", 1, self.params["big"])

    def big_compressed(self) -> DataSet:
        """B1's one long session, with a compression every 1 000 messages (the shape a
        session that kept talking to its model has)."""
        return self._build("big-compressed", 1, self.params["big"], compress_every=1000)

    def many(self) -> DataSet:
        return self._build("many", self.params["many"], 2)

    def many_sessions(self, sessions: int) -> DataSet:
        """``sessions`` sessions of 2 messages in one project (B4 at 100 000)."""
        return self._build(f"many-{sessions}", sessions, 2)
