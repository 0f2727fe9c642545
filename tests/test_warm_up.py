"""The app's warm-up loads what a first request needs, so the first answer does not
load it while it streams (the loading competed with the UI: keys waited up to 0.9 s).

Run in a fresh interpreter: this one has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from tests.support import fake_openai as fo
from tests.support.tui import chat_records, make_app, settings, settle, wait_for, write_session
from mttui.session.service import SessionService
from mttui.widgets.prompt import PromptArea

async def main(root, warm):
    service = SessionService(root / "home", root / "project")
    sid = write_session(service, "a chat", chat_records(20))
    server = fo.FakeOpenAI().add(fo.text("the first answer", pieces=5))
    app = make_app(service, open_browser=False, open_session=sid, warm_up=warm,
                   settings=settings(provider="openai", base_url=server.url, api_key="k"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        if warm:
            await wait_for(pilot, lambda: app._warmed and not any(
                w.group == "warm-up" for w in app.workers), limit=30)
            await settle(pilot)
        before = set(sys.modules)
        chat = app.screen
        prompt = chat.query_one("#prompt", PromptArea)
        prompt.focus()
        prompt.text = "hello"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("the first answer" in (i.text or "")
                                          for i in chat.history.items), limit=30)
        await settle(pilot)
        print(json.dumps(sorted(set(sys.modules) - before)))
    server.close()

root = Path(sys.argv[1])
(root / "project").mkdir(parents=True)
asyncio.run(main(root, sys.argv[2] == "warm"))
"""

HEAVY = ("langchain_openai", "openai", "httpx", "httpcore", "anyio", "langgraph", "mttui")


def _first_request_imports(tmp_path: Path, mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / mode), mode],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_after_the_warm_up_a_first_request_loads_no_client_or_graph_module(
    tmp_path: Path,
) -> None:
    cold = _first_request_imports(tmp_path, "cold")
    warm = _first_request_imports(tmp_path, "warm")
    assert [m for m in cold if m.split(".")[0] in HEAVY]  # what the warm-up is for
    assert [m for m in warm if m.split(".")[0] in HEAVY] == []


WARM_ONLY = r"""
import gc; gc.disable()  # as `mttui` starts
import json, sys
from pathlib import Path
from mttui.app import MttuiApp
from mttui.config import Settings
from mttui.session import gc_pause
from mttui.session.service import SessionService

gc_pause.resume()  # the first frame is drawn
want = ["mttui.screens.chat", "langchain_openai", "langgraph.graph"]
before = [m in sys.modules for m in want]
service = SessionService(Path(sys.argv[1]) / "home", Path(sys.argv[1]))
MttuiApp(service, Settings(provider="openai", api_key="k"))._warm_up()  # the worker's body
walked = {id(o) for o in gc.get_objects()}  # what a full collection walks now
print(json.dumps([before, [m in sys.modules for m in want],
                  [id(sys.modules[m].__dict__) in walked for m in want]]))
"""


def test_the_warm_up_loads_the_chat_screen_and_the_model_client_and_freezes_them(
        tmp_path: Path) -> None:
    """Opened from the browser, the first chat no longer imports its screen on the UI
    thread (164 → 63 ms to its first frame in a terminal)."""
    done = subprocess.run([sys.executable, "-c", WARM_ONLY, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    before, after, walked = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == [False, False, False]
    assert after == [True, True, True]
    # What it imported stays for the process's life: frozen, no full collection walks
    # it again (it did: 0.15–0.2 s each, a freeze as a fast reply ends).
    assert walked == [False, False, False]


def test_a_request_waits_for_the_warm_ups_imports_and_a_late_warm_up_does_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One thread imports the client at a time (two importing one package's modules in
    opposite orders can be handed a half-initialised module); once a model was made, its
    requests load what they need and the warm-up no longer imports anything."""
    import importlib
    import threading

    from mttui.config import Settings
    from mttui.graph.models import openai as provider

    made: list[object] = []
    try:
        provider._MADE.clear()
        with provider._LOADING:  # a warm-up importing
            maker = threading.Thread(target=lambda: made.append(
                provider.make_openai(Settings(provider="openai", api_key="k"))))
            maker.start()
            maker.join(0.3)
            assert maker.is_alive() and not made  # waits for it
        maker.join(30)
        assert made and provider._MADE.is_set()
        imported: list[str] = []
        monkeypatch.setattr(importlib, "import_module", lambda name: imported.append(name))
        provider.warm_up()
        assert imported == []
    finally:
        provider._MADE.clear()
