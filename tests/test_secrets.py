"""Secrets never reach the data directory, the screen or the model (essentials.md "Secrets").

Values of environment variables named like ``*_API_KEY``, ``*_TOKEN``,
``*SECRET*``, ``*PASSWORD*`` (8 characters or longer) become ``[redacted:NAME]``
in tool results and model output; the shell tool does not see them at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mttui.graph.events import MessageAdded, RunEnded, TextDelta, ToolFinished
from mttui.graph.redact import Redactor, is_secret_name, without_secrets
from mttui.session.reader import read_all
from tests.support.fake_openai import FakeOpenAI, text, tools

KEY = "sk-proj-Qz7-unique-api-key-4b1e9d0c2a-never-store"
TOKEN = "ghp_unique-github-token-8f2e61a0d9c3"
PASSWORD = "hunter2-but-longer-9d1"
SHORT = "abc1234"  # 7 characters: hidden from the shell, but too short to redact


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not is_secret_name(k)}
    env = {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "MTTUI_"))}
    env.update(
        MTTUI_HOME=str(home),
        MTTUI_CONFIG=str(home.parent / "none.toml"),
        MTTUI_MAX_RETRIES="0",
        MTTUI_TIMEOUT="10",
    )
    env.update(extra)
    return env


def _cli(home: Path, project: Path, env: dict[str, str], *args: str) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "mttui.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def _secret_env(home: Path, url: str) -> dict[str, str]:
    return _env(
        home,
        OPENAI_BASE_URL=url,
        OPENAI_API_KEY=KEY,
        GITHUB_TOKEN=TOKEN,
        DB_PASSWORD=PASSWORD,
        SHORT_SECRET=SHORT,
    )


def test_a_printed_environment_is_redacted_everywhere(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "notes.txt").write_text(f"the key is {KEY}\nthe token is {TOKEN}\n")
    fake_openai.add(
        tools(
            [
                ("call_env", "shell", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ"}),
                ("call_own", "shell", {"command": "env"}),
                ("call_cat", "shell", {"command": "cat notes.txt"}),
                ("call_read", "read_file", {"path": "notes.txt"}),
            ]
        ),
        text(f"Your key is {KEY} and the token {TOKEN}.", pieces=9),
        # the second run: an answer streamed in small pieces that cut the key
        text(f"again: {KEY}!", pieces=len(KEY)),
    )
    env = _secret_env(home, fake_openai.url)
    env["MTTUI_SANDBOX"] = "off"  # the sandbox would hide the parent's environ altogether
    first = _cli(home, project, env, "exec", "--json", "--approve", "all", "show me the env")
    assert first.returncode == 0, first.stderr
    started = json.loads(first.stdout.splitlines()[0])
    sid, log_path = started["session_id"], Path(started["path"])
    assert fake_openai.headers[0]["authorization"] == f"Bearer {KEY}"  # the key was used

    second = _cli(home, project, env, "exec", "--session", sid, "--approve", "all", "and again")
    assert second.returncode == 0, second.stderr

    # shown: the JSON events, the streamed text of the human output
    for out in (first.stdout, first.stderr, second.stdout, second.stderr):
        for secret in (KEY, TOKEN, PASSWORD):
            assert secret not in out
    assert "again: [redacted:OPENAI_API_KEY]!" in second.stdout

    # logged: the tool results say what was redacted
    records, _ = read_all(log_path)
    tool_text = {
        r["message"]["tool_call_id"]: r["message"]["content"]
        for r in records
        if r["type"] == "transcript_message" and r["message"]["role"] == "tool"
    }
    environ = tool_text["call_env"]
    assert "OPENAI_API_KEY=[redacted:OPENAI_API_KEY]" in environ
    assert "GITHUB_TOKEN=[redacted:GITHUB_TOKEN]" in environ
    assert "DB_PASSWORD=[redacted:DB_PASSWORD]" in environ
    assert f"SHORT_SECRET={SHORT}" in environ  # shorter than 8: not a secret value
    own = tool_text["call_own"]  # the shell's own environment has none of them
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SHORT_SECRET"):
        assert f"{name}=" not in own
    assert "MTTUI_HOME=" in own  # the rest of the environment is there
    assert "the key is [redacted:OPENAI_API_KEY]" in tool_text["call_cat"]
    assert "the token is [redacted:GITHUB_TOKEN]" in tool_text["call_read"]
    answers = [
        r["message"]["content"]
        for r in records
        if r["type"] == "transcript_message" and r["message"]["role"] == "assistant"
    ]
    assert "Your key is [redacted:OPENAI_API_KEY] and the token [redacted:GITHUB_TOKEN]." in answers

    # sent: no request after the first one carries a secret (the header is not the body)
    assert len(fake_openai.requests) == 3
    for body in fake_openai.requests:
        sent = json.dumps(body, ensure_ascii=False)
        for secret in (KEY, TOKEN, PASSWORD):
            assert secret not in sent
    assert "[redacted:OPENAI_API_KEY]" in json.dumps(fake_openai.requests[-1])

    # persisted: no file under the data home holds a secret (logs, index, checkpoints, WALs)
    files = [p for p in home.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"index.sqlite", "checkpoints.sqlite"} <= names
    assert any(p.suffix == ".jsonl" for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in (KEY, TOKEN, PASSWORD):
            assert secret.encode() not in data, path

    # indexed: searching for the key finds nothing, the marker is what is found
    for query in (KEY, KEY[:20], TOKEN):
        found = _cli(home, project, env, "search", query, "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["hits"] == []
    marked = _cli(home, project, env, "search", "redacted:OPENAI_API_KEY", "--json")
    assert json.loads(marked.stdout)["hits"]


def test_streamed_deltas_never_show_a_secret(
    make_runner: Any, fake_openai: FakeOpenAI, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", KEY)
    monkeypatch.setenv("ACME_TOKEN", TOKEN)
    answer = f"a{KEY}{TOKEN} b {KEY[:-1]} c {KEY}"
    fake_openai.add(text(answer, pieces=len(answer)))  # one character per delta
    runner = make_runner("openai", url=fake_openai.url)
    events = list(runner.run("say the keys"))
    assert [e for e in events if isinstance(e, RunEnded)][-1].status == "completed"
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    shown = "".join(deltas)
    expected = (
        f"a[redacted:SERVICE_API_KEY][redacted:ACME_TOKEN] b {KEY[:-1]} c "
        "[redacted:SERVICE_API_KEY]"
    )
    assert shown == expected
    final = [e.message for e in events if isinstance(e, MessageAdded)][-1]
    assert final["content"] == expected
    assert all(KEY not in d and TOKEN not in d for d in deltas)


def test_tool_call_arguments_from_the_model_are_redacted(
    make_runner: Any, fake_openai: FakeOpenAI, monkeypatch: Any, project: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_openai.add(
        tools([("call_w", "write_file", {"path": "k.txt", "content": f"key={KEY}\n"})]),
        text("written"),
    )
    runner = make_runner("openai", url=fake_openai.url, approval="yolo")
    events = list(runner.run("store it"))
    assert [e for e in events if isinstance(e, RunEnded)][-1].status == "completed"
    assert (project / "k.txt").read_text() == "key=[redacted:OPENAI_API_KEY]\n"
    assert KEY.encode() not in runner.writer.path.read_bytes()
    outputs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert outputs and all(KEY not in o for o in outputs)


def test_secret_names_and_lengths() -> None:
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                 "client_secret", "MYSECRETS", "github_token", "PASSWORD"):  # fmt: skip
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "TOKENIZERS_PARALLELISM", "API_KEY_FILE", "KEYRING", "TERM"):
        assert not is_secret_name(name), name
    env = {"PATH": "/bin", "A_TOKEN": "x", "MY_PASSWORD_FILE": "/etc/p", "HOME": "/h"}
    assert without_secrets(env) == {"PATH": "/bin", "HOME": "/h"}
    r = Redactor.from_env({"A_TOKEN": "12345678", "B_TOKEN": "1234567", "PATH": "/usr/bin/x"})
    assert r.names == ["A_TOKEN"]
    assert r.text("x12345678y 1234567 /usr/bin/x") == "x[redacted:A_TOKEN]y 1234567 /usr/bin/x"


def test_the_longest_secret_wins_and_pieces_join_to_the_whole() -> None:
    secrets = {"SHORT_TOKEN": "abcdefgh", "LONG_TOKEN": "abcdefghijkl", "X_SECRET": "efghWXYZ"}
    r = Redactor(secrets.items())
    whole = "--abcdefghijkl--abcdefgh--abcdefgXYZ--efghWXYZabcdefghij"
    expected = r.text(whole)
    assert expected == (
        "--[redacted:LONG_TOKEN]--[redacted:SHORT_TOKEN]--abcdefgXYZ--[redacted:X_SECRET]"
        "[redacted:SHORT_TOKEN]ij"
    )
    for size in range(1, len(whole) + 1):  # every way of cutting it into pieces
        stream = r.stream()
        pieces = [stream.feed(whole[i : i + size]) for i in range(0, len(whole), size)]
        pieces.append(stream.flush())
        assert "".join(pieces) == expected, size
        for piece in pieces:
            assert "abcdefgh" not in piece and "efghWXYZ" not in piece


def test_a_surrogate_pair_split_across_deltas_is_one_character() -> None:
    stream = Redactor([]).stream()
    got = [stream.feed("a\ud83d"), stream.feed("\ude00b\ud800"), stream.feed("c"), stream.flush()]
    assert got == ["a", "\U0001f600b", "\ufffdc", ""]


def test_a_key_from_the_config_file_is_a_secret_too(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    (project / "cfg.txt").write_text(f'api_key = "{KEY}"\n')
    fake_openai.add(tools([("call_c", "shell", {"command": "cat cfg.txt"})]), text("seen"))
    runner = make_runner("openai", url=fake_openai.url, approval="yolo", api_key=KEY)
    events = list(runner.run("read the config"))
    assert [e for e in events if isinstance(e, RunEnded)][-1].status == "completed"
    outputs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert outputs == ['api_key = "[redacted:OPENAI_API_KEY]"\n']
    assert KEY not in json.dumps(fake_openai.requests[-1])
