"""Driving the app in a real terminal (a private tmux server): wait for a screen, build
the command line that starts the app with a test home."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def until(cond: Callable[[], Any], bound: float, what: str) -> Any:
    """Poll ``cond`` every 0.1 s until it is truthy (returned) or ``bound`` s pass."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def app_env(home: Path, config: Path, **extra: str) -> dict[str, str]:
    """The environment of an app under test: its home, an empty config, the offline model."""
    return {"MTTUI_HOME": str(home), "MTTUI_CONFIG": str(config),
            "MTTUI_PROVIDER": "offline", "TERM": "xterm-256color",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **extra}


def app_command(project: Path, env: dict[str, str], *args: str) -> str:
    """A shell line that starts ``mttui`` in ``project`` with ``env`` and ``args``."""
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    argv = " ".join(shlex.quote(a) for a in args)
    return (f"cd {shlex.quote(str(project))} && env {exports} "
            f"{shlex.quote(sys.executable)} -m mttui.cli {argv}").rstrip()


def sent_texts(home: Path) -> list[str]:
    """The user messages of the one session log under ``home``, in order."""
    logs = list(home.rglob("session-*.jsonl"))
    assert len(logs) == 1, logs
    return [json.loads(line)["message"]["content"] for line in logs[0].read_text().splitlines()
            if '"transcript_message"' in line and '"role":"user"' in line.replace(" ", "")]
