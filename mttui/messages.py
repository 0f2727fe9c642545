"""Textual messages that carry results of workers and run events up to screens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # annotations only: not imported before the first frame
    from mttui.graph.events import RunEvent
    from mttui.session.models import HistoryPage, SearchHit, SessionInfo, SessionPage
    from mttui.session.resume.verdict import PreviewVerdict


class SessionsLoaded(Message):
    """A keyset page of the session list (``reset``: it replaces the list)."""

    def __init__(self, page: SessionPage, *, reset: bool, all_projects: bool,
                 serial: int = 0, final: bool = True) -> None:
        super().__init__()
        self.serial = serial
        self.final = final  # False: more of this load follows (the catch-up runs)
        self.page = page
        self.reset = reset
        self.all_projects = all_projects


class PreviewLoaded(Message):
    def __init__(self, info: SessionInfo, page: HistoryPage, verdict: PreviewVerdict) -> None:
        super().__init__()
        self.info = info
        self.page = page
        self.verdict = verdict


class SearchIndexing(Message):
    """A search must first write the FTS rows of ``owed`` messages (once)."""

    def __init__(self, serial: int, owed: int) -> None:
        super().__init__()
        self.serial = serial
        self.owed = owed


class SearchDone(Message):
    def __init__(self, serial: int, query: str, hits: list[SearchHit]) -> None:
        super().__init__()
        self.serial = serial
        self.query = query
        self.hits = hits


class RunEventMessage(Message):
    """One event of a run, posted from the run's thread worker."""

    def __init__(self, event: RunEvent) -> None:
        super().__init__()
        self.event = event


class StreamWake(Message):
    """Streamed text is waiting in the screen's delta buffer (one in the queue at a time)."""


class OpenSession(Message):
    """Open a session in the chat screen (``around``: a message seq to jump to)."""

    def __init__(self, session_id: str | None, *, around: int | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.around = around


class SessionChangeDone(Message):
    """A rename or delete (``what``) of a session finished; ``error``: why it failed."""

    def __init__(self, what: str, session_id: str, *, error: str | None = None) -> None:
        super().__init__()
        self.what = what
        self.session_id = session_id
        self.error = error


class BackToBrowser(Message):
    """Leave the chat for the session browser."""


class ReplayKeys(Message):
    """Keys typed while a screen was not ready for them, to be delivered now (in order)."""

    def __init__(self, keys: list[tuple[str, str | None]]) -> None:
        super().__init__()
        self.keys = keys
