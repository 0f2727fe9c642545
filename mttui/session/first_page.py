"""The session browser's first page, read from the index in a thread while the app starts.

The command line starts it before it imports the user interface, so that the page is
there when the browser is mounted and the first frame already shows the sessions
(rather than an empty list, then the list a frame later)::

    first = FirstPage(service, limit=100)   # a thread reads the index as it is
    ...                                     # imports, the app starts
    page = first.take(timeout=0.2)          # the page, or None (not ready, failed)

Only the index as it is (no catch-up): the browser catches up after its first frame.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import SessionPage
    from .service import SessionService


class FirstPage:
    """One read of the newest ``limit`` sessions, started at once in a daemon thread."""

    def __init__(self, service: SessionService, *, all_projects: bool = False,
                 limit: int = 100) -> None:
        self.service = service
        self.all_projects = all_projects
        self.limit = limit
        self._page: SessionPage | None = None
        self._done = threading.Event()
        self._taken = False
        threading.Thread(target=self._read, name="mttui-first-page", daemon=True).start()

    def _read(self) -> None:
        try:
            self._page = self.service.list_sessions(all_projects=self.all_projects,
                                                    limit=self.limit, fresh=False)
        except Exception:  # noqa: BLE001 - the browser reads it again and reports the error
            self._page = None
        finally:
            self._done.set()

    def take(self, timeout: float) -> SessionPage | None:
        """The page, once (later calls: ``None``); ``None`` too if the read failed or did
        not finish within ``timeout`` seconds (the caller reads it the usual way)."""
        if self._taken or not self._done.wait(timeout):
            return None
        self._taken = True
        page, self._page = self._page, None
        return page
