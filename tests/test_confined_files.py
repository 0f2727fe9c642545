"""``AGENTS.md`` and ``@file`` read only regular files inside their root, and never more
than is sent (issue 36, item 3): a symlink out, a FIFO, a device, a hard link with a
name outside are refused (and never block); a huge file costs no memory; ``@`` in
prose that names no file is left as text."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mttui.core.attachments import FILE_CAP, AttachmentError, resolve
from mttui.graph.instructions import load_instructions
from tests.support.fake_openai import FakeOpenAI
from tests.support.resume import cli, env, json_events

KEY_TEXT = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def _outside_key(tmp_path: Path) -> Path:
    """A private key of the user's, outside every project."""
    ssh = tmp_path / "dotssh"
    ssh.mkdir()
    key = ssh / "id_ed25519"
    key.write_text(KEY_TEXT)
    return key


def _exec(home: Path, project: Path, prompt: str, fake: FakeOpenAI) -> Any:
    """``mttui exec --json PROMPT`` in a plain child; a hang fails on the timeout."""
    extra = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}
    return subprocess.run([sys.executable, "-m", "mttui.cli", "exec", "--json", prompt],
                          cwd=project, env=env(home, **extra), capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def _system(fake: FakeOpenAI) -> str:
    return str(fake.requests[0]["messages"][0]["content"])


def _user(fake: FakeOpenAI) -> str:
    return str([m for m in fake.requests[-1]["messages"] if m["role"] == "user"][-1]["content"])


# -- AGENTS.md -----------------------------------------------------------------------
def test_a_symlinked_agents_md_to_a_key_is_not_sent(
    home: Path, project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    (project / ".git").mkdir()
    (project / "AGENTS.md").symlink_to(_outside_key(tmp_path))
    r = _exec(home, project, "hello", fake_openai)
    assert r.returncode == 0, r.stderr
    assert "OPENSSH" not in json.dumps(fake_openai.requests)
    assert "instructions not read: AGENTS.md (a symlink to outside the repository)" in r.stderr
    assert "instructions loaded" not in r.stderr


def test_agents_md_that_is_a_fifo_a_device_or_a_hard_link_out_is_refused(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / ".git").mkdir()
    os.mkfifo(repo / "AGENTS.md")  # opening it for reading would wait for a writer
    os.mknod(repo / "a" / "AGENTS.md", 0o600 | 0o020000, os.makedev(1, 3))  # /dev/null
    os.link(_outside_key(tmp_path), repo / "a" / "b" / "AGENTS.md")
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.append(load_instructions(
        repo / "a" / "b", {"MTTUI_CONFIG": str(tmp_path / "c.toml")})), daemon=True)
    reader.start()
    reader.join(60)  # a guard only: it used to wait for a writer for good
    assert got, "reading AGENTS.md blocked on the FIFO"
    loaded = got[0]
    assert loaded.files == () and "OPENSSH" not in loaded.section
    assert loaded.refused == (
        f"{repo}/AGENTS.md (not a regular file (a FIFO); refused)",
        f"{repo}/a/AGENTS.md (not a regular file (a device); refused)",
        "AGENTS.md (a hard link with another name outside the repository; refused)",
    )


def test_hard_links_and_symlinks_inside_the_root_are_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "docs" / "rules.md").write_text("SHARED-RULE\n")
    os.link(repo / "docs" / "rules.md", repo / "AGENTS.md")  # both names in the repository
    (repo / "docs" / "AGENTS.md").symlink_to("rules.md")
    loaded = load_instructions(repo / "docs", {"MTTUI_CONFIG": str(tmp_path / "c.toml")})
    assert loaded.refused == ()
    assert loaded.files == (repo / "AGENTS.md", repo / "docs" / "AGENTS.md")
    assert loaded.section.count("SHARED-RULE") == 2


def test_the_global_agents_md_stays_in_its_directory(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "AGENTS.md").symlink_to(_outside_key(tmp_path))
    project = tmp_path / "p"
    project.mkdir()
    loaded = load_instructions(project, {"MTTUI_CONFIG": str(conf / "config.toml")})
    assert "OPENSSH" not in loaded.section
    assert loaded.refused and "a symlink to outside the config directory" in loaded.refused[0]


def _peak_after(code: str, tmp_path: Path) -> int:
    """Growth of the peak RSS (KB) of a child while it runs ``code`` (after imports)."""
    script = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from mttui.core.attachments import resolve\n"
        "from mttui.graph.instructions import load_instructions\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"{code}\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    return int(out.stdout.strip().splitlines()[-1])


def test_a_huge_agents_md_costs_no_memory(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    with open(project / "AGENTS.md", "wb") as f:
        f.write(b"FIRST-RULE\n")
        f.truncate(300 * 1024 * 1024)  # sparse: 300 MB of NUL bytes to read
    code = ("i = load_instructions(Path('p'), {'MTTUI_CONFIG': 'none/c.toml'})\n"
            "assert 'FIRST-RULE' in i.section and i.cut, i.cut")  # fmt: skip
    assert _peak_after(code, tmp_path) < 40 * 1024


# -- @file ---------------------------------------------------------------------------
def test_an_at_fifo_is_refused_at_once(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    os.mkfifo(project / "pipe.txt")
    r = _exec(home, project, "read @pipe.txt", fake_openai)  # it used to hang for good
    assert r.returncode == 1
    assert r.stderr.strip() == "mttui: @pipe.txt: not a regular file (a FIFO); refused"
    assert fake_openai.requests == []


def test_an_at_device_or_a_hard_link_out_is_refused(project: Path, tmp_path: Path) -> None:
    os.mknod(project / "null", 0o600 | 0o020000, os.makedev(1, 3))
    os.link(_outside_key(tmp_path), project / "notes.txt")
    with pytest.raises(AttachmentError, match=r"^@null: not a regular file \(a device\)"):
        resolve(project, "see @null")
    with pytest.raises(AttachmentError, match="^@notes.txt: a hard link with another name "
                                              "outside the project; refused$"):  # fmt: skip
        resolve(project, "see @notes.txt")
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("A = 1\n")
    os.link(project / "src" / "a.py", project / "b.py")  # both names in the project: fine
    assert [f.content for f in resolve(project, "@b.py").files] == ["A = 1\n"]


def test_a_huge_at_file_reads_only_what_is_sent(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    with open(project / "big.log", "wb") as f:
        f.write(b"log line\n" * 5000)  # text beyond the 32 KB sent, then a sparse rest
        f.truncate(100 * 1024 * 1024)
    code = ("a = resolve(Path('p'), 'see @big.log').files[0]\n"
            "assert a.bytes == 100 * 1024 * 1024 and a.cut == a.bytes - 32768, a.bytes")
    assert _peak_after(code, tmp_path) < 40 * 1024
    sent = resolve(project, "see @big.log").files[0]
    head = (b"log line\n" * 5000)[:FILE_CAP]
    assert sent.sha256 == hashlib.sha256(head).hexdigest()  # the hash of what was sent


@pytest.mark.parametrize("prose", ["please install @types/node", "mail a @b.com", "@here now"])
def test_at_in_prose_is_sent_as_text(
    home: Path, project: Path, fake_openai: FakeOpenAI, prose: str
) -> None:
    r = cli(home, project, "exec", "--json", prose, OPENAI_BASE_URL=fake_openai.url,
            OPENAI_API_KEY="sk-test")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _user(fake_openai) == prose  # no file block, the text as typed
    named = {"please install @types/node": "@types/node", "mail a @b.com": "@b.com"}
    warnings = [e["message"] for e in json_events(r.stdout) if e.get("event") == "warning"]
    if prose in named:
        assert warnings == [f"no such file, left as text: {named[prose]}"]
    else:
        assert warnings == []  # "@here" looks like no path at all
