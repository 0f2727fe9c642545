"""Helpers of the stateful test over every feature (tests/test_stateful_features.py).

``DirectedOpenAI``: the scripted OpenAI-compatible server whose reply is read from the
request itself, so queued inputs, steers and forks need no script kept in step: the
last user message ``K7 write f1.txt v7`` gets a ``write_file`` call, ``K7 edit f1.txt
OLD NEW`` an ``edit_file``, ``K7 shell CMD`` a ``shell`` call, ``K7 slow`` a slowly
streamed text, anything else ``re K7``; after tool results the reply is ``done K7``.
Compression summaries are answered by ``RoutedOpenAI``.

``view`` turns a request body into the conversation the model received (the first
system prompt left out, every message a tuple); ``matches`` compares it with the
machine's expectation, where ``Prefix`` stands for a text only its start is known of.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mttui.session.paths import project_hash
from mttui.session.snapshots.git import git_env
from mttui.session.snapshots.shadow import snapshots_dir
from tests.support.compression import RoutedOpenAI, is_summary_message, is_summary_request
from tests.support.fake_openai import slow, text, tools

Msg = tuple[Any, ...]


class DirectedOpenAI(RoutedOpenAI):
    """Replies chosen by the request's last message (see the module's docstring)."""

    def __init__(self) -> None:
        self.calls = 0
        self.replies: list[dict[str, Any]] = []  # parallel to ``agent_requests``
        super().__init__()

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        if is_summary_request(body):
            return super().next_reply(body, headers)
        with self.lock:
            reply = self._reply(body)
            self.agent_requests.append(body)
            self.requests.append(body)
            self.replies.append(reply)
            return reply

    def _reply(self, body: dict[str, Any]) -> dict[str, Any]:
        msgs = [m for m in body["messages"] if m.get("role") != "system"]
        users = [m for m in msgs if m.get("role") == "user" and not is_summary_message(m)]
        key = str(users[-1].get("content") or "").split(" ", 1)[0] if users else "K?"
        if not msgs or msgs[-1].get("role") != "user":
            return text(f"done {key}")
        words = str(msgs[-1].get("content") or "").split("\n", 1)[0].split(" ", 2)
        verb, rest = (words + ["", ""])[1], (words + ["", ""])[2]
        self.calls += 1
        cid = f"call_{self.calls}"
        if verb == "write":
            path, body_text = rest.split(" ", 1)
            return tools([(cid, "write_file", {"path": path, "content": body_text})])
        if verb == "edit":
            path, old, new = rest.split(" ")
            return tools([(cid, "edit_file", {"path": path, "old": old, "new": new})])
        if verb == "shell":
            return tools([(cid, "shell", {"command": rest})])
        if verb == "slow":
            return slow(f"re {key} " + "x" * 200, delay=0.05, pieces=100)
        return text(f"re {key}")


def reply_message(reply: dict[str, Any]) -> Msg:
    """The assistant message a scripted reply becomes in the model's view."""
    if reply["kind"] == "tools":
        return ("assistant", reply.get("content") or "", tuple(c[0] for c in reply["calls"]))
    return ("assistant", reply["content"], ())


def view(body: dict[str, Any]) -> list[Msg]:
    """What the model received, as tuples: ``(role, content, call ids)`` for assistants,
    ``("tool", call id)``, ``(role, content)`` otherwise; the system prompt left out."""
    out: list[Msg] = []
    for i, m in enumerate(body["messages"]):
        role = m.get("role")
        content = m.get("content")
        if isinstance(content, list):  # content parts: their texts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        content = str(content or "")
        if role == "system" and i == 0:
            continue
        if role == "assistant":
            out.append(("assistant", content,
                        tuple(c["id"] for c in m.get("tool_calls") or [])))
        elif role == "tool":
            out.append(("tool", m.get("tool_call_id")))
        else:
            out.append((role, content))
    return out


@dataclass(frozen=True)
class Prefix:
    """An expected message of which only the role and the start of the text are known."""

    role: str
    start: str


def same(actual: Msg, expected: Msg | Prefix) -> bool:
    if isinstance(expected, Prefix):
        return actual[0] == expected.role and str(actual[1]).startswith(expected.start)
    return actual == expected


def matches(actual: list[Msg], expected: list[Msg | Prefix]) -> bool:
    return len(actual) == len(expected) and all(map(same, actual, expected))


def compressed_match(actual: list[Msg], before: list[Msg | Prefix],
                     tail: list[Msg | Prefix]) -> bool:
    """``actual`` is a compression of ``before`` followed by ``tail``: a summary then a
    suffix of ``before`` starting at a user message (or ``before`` itself unchanged)."""
    if matches(actual, before + tail):
        return True
    if not actual or actual[0][0] != "user" or not is_summary_message(
            {"role": "user", "content": actual[0][1]}):
        return False
    kept = actual[1:len(actual) - len(tail)]
    if not matches(actual[len(actual) - len(tail):], tail) or len(kept) > len(before):
        return False
    if not kept or kept[0][0] == "user" and matches(kept, before[len(before) - len(kept):]):
        return True
    # inside an unfinished turn (it ends with tool results): its request is lifted in
    # front and what followed it may be summarized too (compression.md)
    last = max((i for i, m in enumerate(before) if not isinstance(m, Prefix)
                and m[0] == "user"), default=-1)
    rest = kept[1:]
    return (last >= 0 and same(kept[0], before[last])
            and len(rest) <= len(before) - last - 1
            and matches(rest, before[len(before) - len(rest):]))


def every_call_answered(msgs: list[Msg]) -> None:
    """Each assistant tool call is followed by its tool message before anything else."""
    for i, m in enumerate(msgs):
        if m[0] != "assistant" or not m[2]:
            continue
        answers = []
        for later in msgs[i + 1:]:
            if later[0] != "tool":
                break
            answers.append(later[1])
        assert sorted(answers) == sorted(m[2]), f"calls {m[2]} answered by {answers}"


def tree(project: Path) -> dict[str, str]:
    """Every file of the project: relative path -> text."""
    return {str(p.relative_to(project)): p.read_text() for p in sorted(project.rglob("*"))
            if p.is_file()}


def blob(content: str) -> str:
    data = content.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def snapshot_tree(home: Path, project: Path, ref: str) -> dict[str, str]:
    """A file snapshot's files: relative path -> git blob id (read from the shadow repo)."""
    git_dir = snapshots_dir(home, project_hash(project))
    out = subprocess.run(["git", "ls-tree", "-r", "-z", ref], cwd=project, check=True,
                         env={**os.environ, **git_env(git_dir, project)},
                         capture_output=True).stdout.decode()
    files: dict[str, str] = {}
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        files[path] = meta.split()[2]
    return files


def blobs(files: dict[str, str]) -> dict[str, str]:
    return {path: blob(content) for path, content in files.items()}


def ledger_tokens(path: Path) -> dict[str, int]:
    """How often each token was appended to the tools' ledger file."""
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().split():
            counts[line] = counts.get(line, 0) + 1
    return counts


def dumps(msgs: list[Any]) -> str:
    return json.dumps([list(m) if isinstance(m, tuple) else repr(m) for m in msgs], separators=(",", ":"))
