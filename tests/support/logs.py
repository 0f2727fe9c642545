"""Reading and writing session logs in tests."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mttui.session.log import dump_record
from mttui.session.reader import read_all
from mttui.session.record_types import Record as LogRecord
from mttui.session.service import SessionService
from mttui.session.writer import SessionWriter

Record = tuple[str, dict[str, Any]]


def records(path: Path, type_: str | None = None) -> list[LogRecord]:
    """The records of a session log, or only those of one type."""
    return [r for r in read_all(path)[0] if type_ is None or r["type"] == type_]


def message(mid: str, role: str, content: str, **fields: Any) -> Record:
    """A ``transcript_message`` record (fields such as ``status`` as given)."""
    return "transcript_message", {"message": {"id": mid, "role": role, "content": content,
                                              **fields}}  # fmt: skip


def new_session(
    service: SessionService,
    items: Iterable[Record] = (),
    *,
    title: str | None = None,
    provider: str = "p",
    model: str = "m",
) -> SessionWriter:
    """A session holding ``items`` (appended in batches), its writer closed."""
    with service.create_session(provider=provider, model=model, title=title) as w:
        batch = list(items)
        for i in range(0, len(batch), 500):
            w.append_many(batch[i : i + 500])
    return w


def append_behind(writer: SessionWriter, *raw: dict[str, Any]) -> None:
    """Records appended behind the writer's back (a later catch-up ingests them)."""
    with open(writer.path, "ab") as fh:
        for rec in raw:
            fh.write(dump_record({"seq": 900, "timestamp": "2026-01-01T00:00:00.000Z",
                                  "session_id": writer.session_id, **rec}))  # fmt: skip
