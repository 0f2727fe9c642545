"""The scripted OpenAI-compatible server in a process of its own, as a model server is.

In the benchmark's own process its threads would take the interpreter lock from the
app being measured: a reply streamed as fast as the server sends it then measures
the server's share of one core as much as the app's lag.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_CHILD = r"""
import json, sys
from tests.support import fake_openai as fo
server = fo.FakeOpenAI()
server.add(*json.loads(sys.stdin.readline()))
print(server.url, flush=True)
sys.stdin.read()  # until the benchmark closes it
server.close()
"""


@contextmanager
def served(replies: list[dict[str, Any]]) -> Iterator[str]:
    """The base URL of a server process that gives ``replies`` (``fake_openai``'s)."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], cwd=root, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(replies) + "\n")
        proc.stdin.flush()
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError("the scripted server did not start")
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
