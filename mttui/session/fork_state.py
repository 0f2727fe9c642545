"""Whether a fork's copy finished (timetravel.md, Fork).

A fork's ``session_start`` carries ``fork_state: "copying"`` next to ``forked_from``;
once its messages are copied and its thread is seeded, one fsynced ``session_update
{fork_state: "done"}`` says so. A fork log without it was interrupted (a kill, a
full disk): it is listed as incomplete, refused for writing, and can be finished
(``mttui fork ID --finish``) or deleted. Forks made before this field existed have
neither and are complete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .errors import MttuiError

FORK_COPYING = "copying"
FORK_DONE = "done"


def start_fields(forked_from: dict[str, object] | None) -> dict[str, object]:
    """The ``session_start`` fields of a new session forked from ``forked_from``."""
    return {"forked_from": forked_from, "fork_state": FORK_COPYING} if forked_from else {}


def incomplete(records: Iterable[Mapping[str, object]]) -> bool:
    """Whether a log's records are those of a fork whose copy never finished."""
    copying = False
    for rec in records:
        kind, state = rec.get("type"), rec.get("fork_state")
        if kind == "session_start":
            copying = state == FORK_COPYING
        elif kind == "session_update" and state == FORK_DONE:
            copying = False
    return copying


def incomplete_text(session_id: str, *, named: bool = True) -> str:
    """What an incomplete fork is and what to do with it (one line; ``named``: starting
    with "session ID is")."""
    words = (f"an incomplete fork (its copy was interrupted): `mttui fork {session_id} "
             f"--finish` makes it again from its source, `mttui delete {session_id}` "
             "removes it")
    return f"session {session_id} is {words}" if named else words


class ForkIncomplete(MttuiError):
    """Writing to a fork whose copy never finished (exit 1): it would go on from a
    conversation that is not all there."""


def refuse_incomplete(path: Path, start: Mapping[str, object] | None,
                      indexed: Callable[[], bool | None]) -> None:
    """Raise :class:`ForkIncomplete` when the log at ``path`` (first record ``start``) is
    an incomplete fork: from the index (``indexed``), else from the log itself."""
    if (start or {}).get("fork_state") != FORK_COPYING:
        return  # not a fork made with a completion mark: the usual case, nothing read
    found = indexed()
    if found is None:
        from .reader import read_records

        found = incomplete(rec for _, rec in read_records(path))
    if found:
        raise ForkIncomplete(incomplete_text(str((start or {}).get("session_id") or "")))


def incomplete_row(conn: sqlite3.Connection, sess: int) -> bool:
    row = conn.execute("SELECT fork_incomplete FROM sessions WHERE sess = ?", (sess,)).fetchone()
    return bool(row and row[0])
