"""A secret spelled another way is redacted too (issue 36, item 4): its base64 (three
alignments, standard and URL-safe alphabets, with and without padding, wrapped or
not), hex (lower and upper case, ``xxd -p``, ``od``) and reversed forms, in tool
results, model output, ``@file`` attachments and the user's own prompt; none of it
reaches the log, the checkpoints, the index or the model's next request.

The corpus is made by the real tools (``base64``, ``basenc``, ``xxd``, ``od``,
``rev``), once here and once in the shell tool of a real run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mttui.graph.redact import Redactor
from mttui.session.reader import read_all
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.resume import cli, json_events

KEY = "sk-proj-Qz7-unique-api-key-4b1e9d0c2a-never-store"
CORPUS = [  # shell commands that print key.txt (the key alone) another way
    "base64 key.txt",
    "(printf a; cat key.txt) | base64 -w0",
    "(printf ab; cat key.txt; echo) | base64",
    "(printf 'some text before it, to wrap the line: '; cat key.txt) | base64",
    "(printf ab; cat key.txt) | basenc --base64url",
    "(printf a; cat key.txt) | basenc --base64url -w0 | tr -d =",
    "xxd -p key.txt",
    "xxd -p key.txt | tr a-f A-F",
    "od -An -tx1 key.txt",
    "rev key.txt",
    "base64 -w0 key.txt | rev",
    "(printf a; cat key.txt) | basenc --base64url | rev",
]


def _spelled(tmp: Path, key: str = KEY) -> dict[str, str]:
    """What each command of the corpus prints for ``key``, run here by bash."""
    (tmp / "key.txt").write_text(key)
    return {c: subprocess.run(["bash", "-c", c], cwd=tmp, capture_output=True, text=True,
                              check=True).stdout for c in CORPUS}  # fmt: skip


def _windows(tmp: Path, size: int = 16) -> set[str]:
    """Every run of ``size`` characters (whitespace dropped) of the part of each printed
    form that depends on the key: where it differs from the same command's output for
    another key of the same length (the encoding of the text around it does not)."""
    other = _spelled(tmp, "".join(chr(33 + (ord(c) - 32) % 94) for c in KEY))  # each shifted
    out = {KEY[i : i + size] for i in range(len(KEY) - size + 1)}
    for command, printed in _spelled(tmp).items():
        mine, theirs = "".join(printed.split()), "".join(other[command].split())
        assert len(mine) == len(theirs), command
        differ = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
        part = mine[differ[0] : differ[-1] + 1]
        out.update(part[i : i + size] for i in range(len(part) - size + 1))
    return out


def _leaks(data: str, windows: set[str]) -> list[str]:
    squeezed = "".join(data.split())
    return sorted(w for w in windows if w in squeezed)


def test_every_spelling_of_the_corpus_is_redacted(tmp_path: Path) -> None:
    windows = _windows(tmp_path)
    redactor = Redactor([("OPENAI_API_KEY", KEY)])
    for command, printed in _spelled(tmp_path).items():
        shown = redactor.text(printed)
        assert "[redacted:OPENAI_API_KEY]" in shown, command
        assert _leaks(printed, windows), command  # the check would see it
        assert _leaks(shown, windows) == [], command


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_streamed_spellings_never_show_and_join_to_the_whole(
    tmp_path: Path, size: int
) -> None:
    windows = _windows(tmp_path)
    spelled = _spelled(tmp_path)
    redactor = Redactor([("OPENAI_API_KEY", KEY)])
    whole = "answer: " + " then ".join(spelled.values()) + " end"
    stream = redactor.stream()
    pieces = [stream.feed(whole[i : i + size]) for i in range(0, len(whole), size)]
    pieces.append(stream.flush())
    assert "".join(pieces) == redactor.text(whole)
    assert _leaks("".join(pieces), windows) == []


def test_no_spelling_reaches_the_log_checkpoints_index_or_model(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    windows = _windows(tmp_path)
    spelled = _spelled(tmp_path)
    (project / "key.txt").write_text(KEY)
    (project / "enc.txt").write_text(f"stored as is: {KEY}\nstored encoded: "
                                     + spelled["base64 key.txt"])  # fmt: skip
    calls = [(f"call_{i}", "shell", {"command": c}) for i, c in enumerate(CORPUS)]
    fake_openai.add(
        tools(calls),
        text("decoded it: " + spelled["xxd -p key.txt"] + spelled["rev key.txt"], pieces=40),
        text("and again"),
    )
    prompt = f"my key backwards is {KEY[::-1]}, and see @enc.txt"
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": KEY}
    r = cli(home, project, "exec", "--json", "--approve", "all", prompt, **env)
    assert r.returncode == 0, r.stderr
    sid = json_events(r.stdout)[0]["session_id"]
    warnings = [e["message"] for e in json_events(r.stdout) if e.get("event") == "warning"]
    assert any(w.startswith("your message held the value of OPENAI_API_KEY") for w in warnings)
    assert any(w.startswith("an @file held the value of OPENAI_API_KEY") for w in warnings)
    again = cli(home, project, "exec", "--session", sid, "--json", "next", **env)
    assert again.returncode == 0, again.stderr

    # the model: neither the prompt, nor the file block, nor a tool result, nor its own
    # answer sent back in the next request
    assert len(fake_openai.requests) == 3
    for body in fake_openai.requests:
        assert _leaks(json.dumps(body, ensure_ascii=False), windows) == []
    last = json.dumps(fake_openai.requests[-1], ensure_ascii=False)
    assert last.count("[redacted:OPENAI_API_KEY]") >= len(CORPUS) + 3
    # shown
    for out in (r.stdout, r.stderr, again.stdout, again.stderr):
        assert _leaks(out, windows) == []
    # the log holds the redacted prompt
    log = next(home.rglob("*.jsonl"))
    records, _ = read_all(log)
    user = [x["message"] for x in records if x["type"] == "transcript_message"][0]
    assert user["content"] == "my key backwards is [redacted:OPENAI_API_KEY], and see @enc.txt"
    # stored: logs, index, checkpoints (and their WALs), as bytes
    files = [p for p in home.rglob("*") if p.is_file()]
    assert {"index.sqlite", "checkpoints.sqlite"} <= {p.name for p in files}
    for path in files:
        data = path.read_bytes().decode("utf-8", errors="replace")
        assert _leaks(data, windows) == [], path


def test_a_queued_text_is_redacted_before_it_is_written(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": KEY}
    r = cli(home, project, "exec", "--json", "first", **env)
    sid = json_events(r.stdout)[0]["session_id"]
    hexed = KEY.encode().hex()
    added = cli(home, project, "queue", "add", sid, f"later: {hexed}", **env)
    assert added.returncode == 0, added.stderr
    log = next(home.rglob("*.jsonl"))
    records, _ = read_all(log)
    queued = [x for x in records if x["type"] == "pending_add"]
    assert [x["text"] for x in queued] == ["later: [redacted:OPENAI_API_KEY]"]
    assert hexed[:16] not in log.read_text()


def test_a_secret_in_agents_md_is_not_sent(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    windows = _windows(tmp_path)
    (project / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (project / "AGENTS.md").symlink_to(".env")  # inside the project: read, but redacted
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": KEY}
    r = cli(home, project, "exec", "--json", "hello", **env)
    assert r.returncode == 0, r.stderr
    system = str(fake_openai.requests[0]["messages"][0]["content"])
    assert "OPENAI_API_KEY=[redacted:OPENAI_API_KEY]" in system
    assert _leaks(json.dumps(fake_openai.requests), windows) == []
