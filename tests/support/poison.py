"""Poisoned log lines: each must take down no more than itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAD = '"timestamp":"2026-01-01T00:00:00.000Z","session_id":"{sid}"'


def _rec(type_: str, seq: int, sid: str, body: str) -> bytes:
    head = HEAD.format(sid=sid)
    return f'{{"type":"{type_}","seq":{seq},{head}{"," + body if body else ""}}}'.encode()


def poisoned_lines(sid: str, seq: int) -> dict[str, bytes]:
    """Named hostile lines for session ``sid``, numbered from ``seq``."""
    deep = 100_000
    return {
        "deep nesting": b"[" * deep + b"]" * deep,
        "deep object in a record": _rec("transcript_message", seq, sid,
                                        '"message":' + '{"a":' * 5000 + "1" + "}" * 5000),
        "lone surrogate text": _rec("transcript_message", seq, sid,
                                    '"message":{"id":"m-sur","role":"user",'
                                    '"content":"bad \\ud800 text","status":"sent"}'),
        "lone surrogate key": _rec("session_update", seq, sid, '"\\udc00":"x","title":"t\\udfff"'),
        "call_id a list": _rec("tool_outcome", seq, sid,
                               '"run_id":"r","call_id":["a","b"],"status":"success"'),
        "tool_calls a string": _rec("approval_request", seq, sid,
                                    '"request_id":"apr-x","run_id":"r","tool_calls":"shell"'),
        "tool_calls of numbers": _rec("approval_request", seq, sid,
                                      '"request_id":"apr-y","run_id":"r","tool_calls":[1,{"x":2}]'),
        "decisions a list": _rec("approval_decision", seq, sid,
                                 '"request_id":"apr-x","decisions":["approve"]'),
        "decisions of numbers": _rec("approval_decision", seq, sid,
                                     '"request_id":"apr-x","decisions":{"c1":5}'),
        "message a string": _rec("transcript_message", seq, sid, '"message":"hello"'),
        "message tool_calls a dict": _rec(
            "transcript_message", seq, sid,
            '"message":{"id":"m-tc","role":"assistant","content":"","tool_calls":{"id":1}}'),
        "seq true": b'{"type":"run_start","seq":true,"run_id":"r"}',
        "seq huge": _rec("run_start", 10**30, sid, '"run_id":"r"'),
        "count huge": _rec("compression", seq, sid, '"summary":"s","removed_count":' + "9" * 40),
        "NaN and Infinity": _rec("run_end", seq, sid, '"run_id":"r","usage":{"input_tokens":NaN,'
                                 '"output_tokens":Infinity},"status":"completed"'),
        "invalid UTF-8": b'{"type":"run_start","seq":7,"run_id":"\xff\xfe"}',
        "stats of text": _rec("session_end", seq, sid, '"stats":{"turns":"many"}'),
        "null everywhere": _rec("approval_request", seq, sid,
                                '"request_id":null,"run_id":null,"tool_calls":null'),
    }  # fmt: skip


def append_raw(path: Path, *lines: bytes) -> None:
    with open(path, "ab") as fh:
        for line in lines:
            fh.write(line + b"\n")


def run_cli(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m mttui.cli`` as a user runs it, with its own home."""
    env = {**os.environ, "MTTUI_HOME": str(home), "MTTUI_CONFIG": str(home.parent / "cfg.toml")}
    env.pop("MTTUI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "mttui.cli", "--project", str(project), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def json_out(done: subprocess.CompletedProcess[str]) -> object:
    assert done.returncode == 0, (done.returncode, done.stderr)
    return json.loads(done.stdout)
