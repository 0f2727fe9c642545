"""Helpers of the stateful test over every feature (tests/test_stateful_features.py).

``DirectedOpenAI``: the scripted OpenAI-compatible server whose reply is read from the
request itself, so queued inputs, steers and forks need no script kept in step: the
last user message ``K7 write f1.txt v7`` gets a ``write_file`` call, ``K7 edit f1.txt
OLD NEW`` an ``edit_file``, ``K7 shell CMD`` a ``shell`` call, ``K7 slow`` a slowly
streamed text, anything else ``re K7``; after tool results the reply is ``done K7``.
``view``: a request as the model received it (tuples, the system prompt left out);
``matches`` compares it with the machine's expectation (``Prefix``: a text's start).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings

from mttui.config import Settings
from mttui.core.handle import SessionHandle
from mttui.session.paths import project_hash
from mttui.session.service import SessionService
from mttui.session.snapshots.git import git_env
from mttui.session.snapshots.shadow import snapshots_dir
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold
from tests.support.compression import RoutedOpenAI, is_summary_message, is_summary_request
from tests.support.fake_openai import slow, text, tools
from tests.support.resume import env as cli_env
from tests.support.resume import recheck

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
    optional: bool = False  # may be missing too

    @property
    def required(self) -> Prefix:
        return Prefix(self.role, self.start)


def same(actual: Msg, expected: Msg | Prefix) -> bool:
    if isinstance(expected, Prefix):
        return actual[0] == expected.role and str(actual[1]).startswith(expected.start)
    return actual == expected


def matches(actual: list[Msg], expected: list[Msg | Prefix]) -> bool:
    for i, e in enumerate(expected):
        if isinstance(e, Prefix) and e.optional:
            rest = expected[:i] + expected[i + 1:]
            return matches(actual, rest) or matches(actual, [*rest[:i], e.required, *rest[i:]])
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


def blob(content: str) -> str:  # git's id of a file
    return hashlib.sha1(b"blob %d\0" % len(content.encode()) + content.encode()).hexdigest()


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
    return json.dumps([list(m) if isinstance(m, tuple) else repr(m) for m in msgs])


def directive(n: int, verb: str, path: str, files: dict[str, str], ledger: Path) -> str:
    """The text of user message ``n`` asking for ``verb`` on ``path`` (a chat when the
    file it needs is missing); shell commands append ``tN`` to the ``ledger`` file."""
    path = path.split("/")[-1] if verb in ("rm", "shell") else path
    if verb == "write":
        return f"K{n} write {path} w{n}"
    if verb == "edit" and files.get(path):
        return f"K{n} edit {path} {files[path]} e{n}"
    if verb == "rm":
        return f"K{n} shell printf 't{n}\\n' >> {ledger}; rm -f {path}"
    if verb == "shell":
        return f"K{n} shell printf 't{n}\\n' >> {ledger}; printf 's{n}' > {path}"
    if verb == "attach" and path in files:
        return f"K{n} chat @{path}"
    return f"K{n} chat"


def apply_effects(text: str, files: dict[str, str], tokens: dict[str, int]) -> None:
    """What the tool call of ``text``'s directive does, applied to a model of the
    project's ``files`` and of the ledger's ``tokens``."""
    words = text.split(" ", 2)
    verb, rest = words[1], words[2] if len(words) > 2 else ""
    if verb == "write":
        path, body = rest.split(" ", 1)
        files[path] = body
    elif verb == "edit":
        path, _, new = rest.split(" ")
        files[path] = new
    elif verb == "shell":
        for part in rest.split("; "):
            if " >> " in part:  # the ledger
                token = part.split("'")[1].removesuffix("\\n")
                tokens[token] = tokens.get(token, 0) + 1
            elif part.startswith("rm -f "):
                files.pop(part[6:], None)
            elif part.startswith("printf ") and " > " in part:
                body, path = part[7:].split(" > ")
                files[path] = body.strip("'")


def snapshot_problem(service: SessionService, sid: str, before: dict[str, dict[str, str]],
                     snapped: set[str]) -> str | None:
    """What is wrong with session ``sid``'s file snapshots: each must name a user message
    whose tree just before it (``before``) it holds, and exactly the turns of ``snapped``
    have one."""
    info = service.get(sid)
    records, _ = service.records(sid)
    msgs = fold(records).messages
    named: list[str] = []
    for cp in read_timeline(info.path, msgs).checkpoints:
        m = msgs[cp.seq - 1] if 1 <= cp.seq <= len(msgs) else {}
        text = str(m.get("content") or "")
        if m.get("role") != "user" or text not in before:
            return (f"snapshot {cp.ref} names message {cp.seq} ({m.get('role')}: {text!r}), "
                    "not a user message of a turn")
        named.append(text)
        if snapshot_tree(service.layout.home, service.project, cp.ref) != blobs(before[text]):
            return f"snapshot before {text!r} is not the tree before it: {before[text]}"
    if sorted(named) != sorted(snapped):
        return f"snapshots name {sorted(named)}, expected {sorted(snapped)}"
    return None


def seq_of(service: SessionService, sid: str, text: str) -> int:
    """The seq (``history`` numbering) of the user message ``text`` of session ``sid``."""
    records, _ = service.records(sid)
    return next(i + 1 for i, m in enumerate(fold(records).messages)
                if m.get("role") == "user" and m.get("content") == text)


def new_home() -> tuple[Path, dict[str, str | None]]:
    """A temporary directory with ``project/`` and the data home set to ``home/`` (the
    environment it replaced is returned for :func:`drop_home`)."""
    tmp = Path(tempfile.mkdtemp(prefix="mttui-sm-"))
    (tmp / "project").mkdir()
    saved = {k: os.environ.get(k) for k in ("MTTUI_HOME", "MTTUI_CONFIG")}
    os.environ.update(MTTUI_HOME=str(tmp / "home"), MTTUI_CONFIG=str(tmp / "none.toml"))
    return tmp, saved


def drop_home(tmp: Path, saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(tmp, ignore_errors=True)


def exec_killed(home: Path, project: Path, sid: str, url: str, prompt: str, ledger: Path,
                token: str) -> str | None:
    """``mttui exec --session SID --approve all PROMPT`` in a subprocess, killed with
    SIGKILL (with its tool) once the tool wrote ``token`` to the ledger; what went
    wrong, else ``None``."""
    env = cli_env(home, OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test", MTTUI_SANDBOX="off",
                  MTTUI_MODEL="fake")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from mttui.cli import main; main()", "exec", "--session", sid,
         "--approve", "all", prompt], cwd=project, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        while token not in ledger_tokens(ledger):
            if proc.poll() is not None or time.monotonic() > deadline:
                return f"exec ended ({proc.returncode}) before its tool ran"
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the exec and its tool, as a crash would
        proc.wait()
    return None


def next_view(fake: DirectedOpenAI, seen: int, conv: list[Any], tail: list[Any],
              loose: bool) -> tuple[list[Msg], str | None]:
    """The view of request number ``seen`` and what is wrong with it: it must be
    ``conv + tail`` (``loose``: after a compaction, a summary and what it kept of
    ``conv``), every tool call answered."""
    if seen >= len(fake.agent_requests):
        return [], "the model received no request where one was due"
    got = view(fake.agent_requests[seen])
    every_call_answered(got)
    ok = compressed_match(got, conv, tail) if loose else matches(got, conv + tail)
    if not ok:
        return got, f"the model's view differs\nexpected {dumps(conv + tail)}\ngot {dumps(got)}"
    return got, None


def run_and_stop(handle: SessionHandle, fake: DirectedOpenAI, prompt: str) -> None:
    """Run ``prompt`` (a slowly streamed answer) in a thread and stop it mid-stream."""
    before = len(fake.agent_requests)
    worker = threading.Thread(target=lambda: list(handle.run(prompt)))
    worker.start()
    while len(fake.agent_requests) == before and worker.is_alive():
        time.sleep(0.01)
    time.sleep(0.1)
    handle.stop()
    worker.join(30)


def resumed(service: SessionService, settings: Settings, sid: str, codes: tuple[str, ...]
            ) -> tuple[SessionHandle, str | None]:
    """``sid`` opened and resumed; ``resume-check`` before it must warn exactly
    ``codes``, the resume too, and the check after it nothing."""
    before = [w["code"] for w in recheck(service.layout.home, service.project, sid)["warnings"]]
    handle = SessionHandle.open(service, settings, sid)
    said = [w["code"] for w in handle.resume().warnings]
    after = recheck(service.layout.home, service.project, sid)["warnings"]
    if sorted(set(before)) != sorted(set(codes)):
        return handle, f"resume-check before the resume: {before}, expected {codes}"
    if sorted(set(said)) != sorted(set(codes)):
        return handle, f"the resume warned {said}, expected {codes}"
    if after:
        return handle, f"resume-check after the resume is not clean: {after}"
    return handle, None


def user_edit(project: Path, files: dict[str, str], path: str, content: str | None) -> None:
    """The user writes ``content`` to ``path`` (``None``: deletes it), in the project and
    in the model of its ``files``."""
    target = project / path
    if content is None:
        target.unlink(missing_ok=True)
        files.pop(path, None)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        files[path] = content


def run_machine(machine: Any, examples: int, steps: int) -> None:
    """Run a state machine; ``MTTUI_STATEFUL_NO_SHRINK=1`` reports the first failing
    example as found (shrinking a slow machine takes minutes)."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if not os.environ.get("MTTUI_STATEFUL_NO_SHRINK"):
        phases.append(Phase.shrink)
    case = machine.TestCase
    case.settings = settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                             phases=phases, suppress_health_check=list(HealthCheck))
    case().runTest()
