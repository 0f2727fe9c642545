"""``mttui`` (the app) and ``mttui demo``: build the services, then hand them to the App."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.session.first_page import FirstPage


def run_tui(args: argparse.Namespace, service: SessionService) -> int:
    """Open the session browser, or a session with ``--continue`` / ``--resume S``."""
    open_session: str | None = None
    # No catch-up here: the browser does it in a worker once it is on screen.
    if args.continue_ or args.resume:
        ref = "last" if args.continue_ else args.resume
        open_session = service.resolve(ref).id
    elif args.resume is None and not has_sessions(service):
        # a new chat, at once
        return _run_app(service, settings_from(args), open_browser=False)
    first = None
    if open_session is None:  # the browser first: its page is read while the settings
        from mttui.session.first_page import FirstPage  # are read and the app imports

        first = FirstPage(service)  # the browser's page size (checked when it is taken)
    return _run_app(service, settings_from(args), open_session=open_session, first_page=first)


def has_sessions(service: SessionService) -> bool:
    """Whether the project has a session log (a look at its folder: no index needed)."""
    folder = service.layout.project_dir(service.project_hash)
    try:  # the first log found will do (a glob lists all 10 000 of a big folder first)
        with os.scandir(folder) as entries:
            return any(entry.name.endswith(".jsonl") for entry in entries)
    except OSError:  # no folder yet (or not one)
        return False


def demo_home() -> Path:
    """The demo's own data home, beside (never inside the history of) the real one."""
    from mttui.session.paths import data_home

    return data_home() / "demo"


def run_demo(args: argparse.Namespace) -> int:
    """Fill the demo home with sample sessions and open the app on it, offline."""
    from mttui.demo import build_demo

    home = demo_home()
    project = home / "project"
    if getattr(args, "reset", False):
        reset_demo(home)
    print(f"mttui demo: sample sessions in {home}", file=sys.stderr)
    build_demo(home, project)
    service = SessionService(home, project)
    return _run_app(service, settings_from(args, provider="offline", model="offline"))


def reset_demo(home: Path) -> None:
    """Remove the demo's home (only a folder the demo made: it holds its marker)."""
    import shutil

    from mttui.demo import MARKER

    if (home / MARKER).exists():
        shutil.rmtree(home)


def _run_app(service: SessionService, settings: Settings, *,
             open_session: str | None = None, open_browser: bool = True,
             first_page: FirstPage | None = None) -> int:
    from mttui.app import MttuiApp

    if not sys.stdout.isatty():
        print("mttui: the app needs a terminal (try `mttui sessions` or `mttui exec`)",
              file=sys.stderr)
        return Exit.FAILED
    app = MttuiApp(service, settings, open_session=open_session, open_browser=open_browser,
                   first_page=first_page)
    app.run()
    if app.last_session:
        print(f"To come back to this session: mttui --resume {app.last_session}")
    return int(app.return_code or 0)
