"""``@path`` mentions: the file blocks the scripted server receives, the logged
``attachments``, refusals (outside the project, through a symlink) before anything
is sent, a missing file left as text, the 32 KB cap, and what is not a mention."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from mttui.core.attachments import FILE_CAP, AttachmentError, mentions, model_text, resolve
from tests.support.fake_openai import FakeOpenAI
from tests.support.logs import records
from tests.support.resume import cli, json_events


def _env(fake: FakeOpenAI) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}


def _last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def test_the_model_gets_the_file_block_and_the_log_the_attachment(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "src").mkdir()
    body = "def answer():\n    return 42\n"
    (project / "src" / "app.py").write_text(body)
    r = cli(home, project, "exec", "--json", "explain @src/app.py please", **_env(fake_openai))
    assert r.returncode == 0, r.stderr
    sent = _last_user(fake_openai.requests[0])
    assert sent.startswith("explain @src/app.py please\n\n")
    assert f'<file path="src/app.py">\n{body}</file>' in sent
    from mttui.session.service import SessionService

    sid = json_events(r.stdout)[0]["session_id"]
    log = records(SessionService(home, project).resolve(sid).path)
    user = [rec["message"] for rec in log if rec["type"] == "transcript_message"][0]
    assert user["content"] == "explain @src/app.py please"
    assert user["attachments"] == [{"path": "src/app.py",
                                    "sha256": hashlib.sha256(body.encode()).hexdigest(),
                                    "bytes": len(body)}]  # fmt: skip
    h = cli(home, project, "history", sid, "--json", **_env(fake_openai))
    assert json.loads(h.stdout)["messages"][0]["attachments"] == user["attachments"]


@pytest.mark.parametrize("mention", ["@../outside.txt", "@link/outside.txt"])
def test_refused_before_anything_is_sent(
    home: Path, project: Path, fake_openai: FakeOpenAI, mention: str
) -> None:
    (project.parent / "outside.txt").write_text("secret")
    (project / "link").symlink_to(project.parent)
    r = cli(home, project, "exec", f"read {mention}", **_env(fake_openai))
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and mention in r.stderr
    assert fake_openai.requests == []
    assert not list(home.rglob("*.jsonl"))


def test_cap_and_note(project: Path) -> None:
    (project / "big.txt").write_text("x" * (FILE_CAP + 100))
    files = resolve(project, "see @big.txt").files
    assert files[0].bytes == FILE_CAP + 100 and files[0].cut == 100
    text = model_text("see @big.txt", files)
    assert "[cut at 32 KB: 100 more bytes not shown]" in text
    assert files[0].content == "x" * FILE_CAP and "x" * (FILE_CAP + 1) not in text


def test_what_is_a_mention(project: Path) -> None:
    (project / "Makefile").write_text("all:\n")
    (project / "a b.txt").write_text("spaced")
    text = ('mail me@example.com, use @property, see @Makefile, @"a b.txt" and `@x.py` '
            "and\n```\n@decorated.thing\n```\n(@Makefile).")
    assert mentions(project, text) == ["Makefile", "a b.txt"]
    with pytest.raises(AttachmentError, match="is a directory"):
        (project / "d").mkdir()
        resolve(project, "@d/")


def test_a_queued_message_gets_its_files_when_it_runs(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "notes.txt").write_text("queued content\n")
    env = _env(fake_openai)
    r = cli(home, project, "exec", "--json", "first", **env)
    sid = json_events(r.stdout)[0]["session_id"]
    assert cli(home, project, "queue", "add", sid, "use @notes.txt", **env).returncode == 0
    assert cli(home, project, "queue", "add", sid, "use @gone.txt", **env).returncode == 0
    r = cli(home, project, "queue", "resume", sid, "--approve", "all", **env)
    assert '<file path="notes.txt">\nqueued content\n</file>' in _last_user(
        fake_openai.requests[-2])
    assert _last_user(fake_openai.requests[-1]) == "use @gone.txt"  # a missing file: text
    assert "no such file, left as text: @gone.txt" in r.stderr
    items = json.loads(cli(home, project, "queue", "list", sid, "--json", **env).stdout)
    assert items["items"] == []
