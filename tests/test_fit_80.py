"""At 80×24 the chat header keeps the branch (the path loses its middle) and the
footers keep ``^o Sessions`` and ``f1 Help``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rich.cells import cell_len

from mttui.screens.browser import BrowserScreen
from mttui.screens.chat import ChatScreen
from mttui.session.service import SessionService
from mttui.widgets.header import Header, middle_path
from tests.support.tui import make_app, msg, screen_text, settle, write_session

LONG = Header("Clean the build and fix div()", "e30b361fe823",
              path="~/work/clients/acme/very-long-project-name", branch="feature/login")


def test_the_path_loses_its_middle_first() -> None:
    assert middle_path("~/work/clients/acme/shop", 30) == "~/work/clients/acme/shop"
    assert middle_path("~/work/clients/acme/shop", 18) == "~/…/acme/shop"
    assert middle_path("~/work/clients/acme/shop", 12) == "~/…/shop"
    assert middle_path("~/work/clients/acme/shop", 3) == "…/shop"  # never less
    assert middle_path("…/pytest-7/project", 12) == "…/project"


def test_the_header_fits_its_width_and_keeps_the_branch() -> None:
    assert LONG.render(140).plain == ("mttui  Clean the build and fix div()  ·  e30b361fe823"
                                      "  ·  ~/work/clients/acme/very-long-project-name"
                                      " (feature/login)")
    for width in (110, 100, 80, 70, 60):
        line = LONG.render(width).plain
        assert cell_len(line) <= width, (width, line)
        assert line.endswith("/very-long-project-name (feature/login)"), line
        assert line.startswith("mttui  Clean the"), line
    assert "e30b361fe823" in LONG.render(110).plain and "…" in LONG.render(110).plain
    assert "e30b361fe823" not in LONG.render(80).plain  # the id goes before the title
    assert "Clean the build and fix div…" in LONG.render(80).plain
    cjk = Header("重构会话存储：快速分页与全文搜索", "5e5500000001", path="~/p", branch="main")
    assert cell_len(cjk.render(40).plain) <= 40 and cjk.render(40).plain.endswith("(main)")


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "feature/login", str(path)], check=True)
    return path


async def test_chat_at_80_columns(home: Path, tmp_path: Path) -> None:
    project = _repo(tmp_path / "clients" / "acme" / "very-long-project-name")
    service = SessionService(home, project)
    sid = write_session(service, "Clean the build and fix div()", [msg("user", "hi", 1)])
    app = make_app(service, open_session=sid)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        lines = screen_text(app).splitlines()
        assert "…/very-long-project-name (feature/login)" in lines[0], lines[0]
        assert "Clean the" in lines[0]
        assert "^o Sessions" in lines[-1] and "f1 Help" in lines[-1], lines[-1]
        await pilot.resize_terminal(120, 30)
        await settle(pilot)
        assert sid in screen_text(app).splitlines()[0]  # room again: the id is back


async def test_browser_footer_at_80_columns(service: SessionService) -> None:
    write_session(service, "A session", [msg("user", "hi", 1)])
    app = make_app(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        footer = screen_text(app).splitlines()[-1]
        for key in ("⏎ Open", "/ Search", "a All", "q Quit", "f1 Help"):
            assert key in footer, footer
        await pilot.resize_terminal(120, 30)
        await settle(pilot)
        assert "a All projects" in screen_text(app).splitlines()[-1]
