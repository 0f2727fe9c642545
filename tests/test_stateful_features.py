"""Every feature at once, as a state machine: send (with tools that write, edit, delete),
queue add/edit/remove/resume, steer, approve/deny, stop, kill -9 and resume, compact,
/clear, rewind (conversation / code / both) and undo, fork (then go on in the fork),
ledger settle, the user's own file edits, ``@file``. The machine keeps its own model of
the project's files, of what the model must receive next, of each user message's
tree and view; the product must agree after every step (see the invariants).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mttui.config import Settings
from mttui.core.clear import clear_session
from mttui.core.fork import fork
from mttui.core.handle import ApprovalAnswer, SessionHandle
from mttui.core.ledger import settle_open
from mttui.core.rewind import RewindRefused, rewind_held
from mttui.session.service import SessionService
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold
from tests.support.resume import env as cli_env
from tests.support.resume import index_equals_rebuild, recheck
from tests.support.stateful import (
    DirectedOpenAI, Msg, Prefix, blobs, compressed_match, dumps, every_call_answered,
    ledger_tokens, matches, reply_message, snapshot_tree, tree, view,
)

FILES = ["f1.txt", "f2.txt", "sub/f3.txt"]
Expected = list[Any]  # Msg | Prefix


class Features(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="mttui-sm-"))
        self.home, self.project = self.tmp / "home", self.tmp / "project"
        self.project.mkdir()
        self.ledger = self.tmp / "ledger"  # outside the project: no rewind touches it
        self.fake = DirectedOpenAI()
        self.saved_env = {k: os.environ.get(k) for k in ("MTTUI_HOME", "MTTUI_CONFIG")}
        os.environ.update(MTTUI_HOME=str(self.home), MTTUI_CONFIG=str(self.tmp / "none.toml"))
        self.settings = Settings(provider="openai", model="fake", base_url=self.fake.url,
                                 api_key="sk-test", approval="ask", sandbox="off",
                                 max_retries=0, timeout=20.0)
        self.service = SessionService(self.home, self.project)
        self.n = 0
        self.seen = 0  # agent requests already checked
        self.conv: Expected = []  # what the model receives next, before the new input
        self.loose = False  # a compaction happened: a summary + a suffix of conv expected
        self.tree: dict[str, str] = {}
        self.tokens: dict[str, int] = {}
        self.view_before: dict[str, Expected] = {}
        self.tree_before: dict[str, dict[str, str]] = {}
        self.history: list[str] = []  # user texts as ``history`` numbers them
        self.users: list[str] = []  # user texts of the live branch
        self.cleared_at = 0  # users[cleared_at:] came after the last /clear
        self.clears: list[int] = []
        self.at_message = True  # the view changed last by a message (not a rewind, …)
        self.aligned: dict[str, bool] = {}  # nothing but a message came before this one
        self.snapped: set[str] = set()  # user texts whose turn has a file snapshot
        self.waiting: dict[str, Any] | None = None  # calls awaiting approval
        self.queue: list[list[Any]] = []  # [item id, text, held]
        self.holding = False
        self.rewinds: list[tuple[Any, ...]] = []
        self.interrupted: list[str] = []
        self.handle: SessionHandle | None = None
        self.sid = ""
        self.log: list[str] = []

    # -- helpers ---------------------------------------------------------------------
    def text(self, verb: str) -> str:
        self.n += 1
        return f"K{self.n} {verb}".rstrip()

    def step(self, what: str) -> None:
        self.log.append(what)

    def fail(self, why: str) -> None:
        raise AssertionError(f"{why}\nsteps:\n  " + "\n  ".join(self.log))

    def next_request(self) -> list[Msg]:
        if self.seen >= len(self.fake.agent_requests):
            self.fail("the model received no request where one was due")
        body = self.fake.agent_requests[self.seen]
        self.seen += 1
        got = view(body)
        every_call_answered(got)
        return got

    def expect(self, tail: Expected) -> list[Msg]:
        """The next request is conv + tail (after a compaction: summary + suffix + tail)."""
        got = self.next_request()
        ok = (compressed_match(got, self.conv, tail) if self.loose
              else matches(got, self.conv + tail))
        if not ok:
            self.fail(f"the model's view differs\nexpected {dumps(self.conv + tail)}"
                      f"\ngot {dumps(got)}")
        self.loose = False
        return got

    def effects(self, text: str) -> None:
        """Apply what the tool of ``text``'s directive does to the machine's model."""
        words = text.split(" ", 2)
        verb, rest = words[1], words[2] if len(words) > 2 else ""
        if verb == "write":
            path, body = rest.split(" ", 1)
            self.tree[path] = body
        elif verb == "edit":
            path, _, new = rest.split(" ")
            self.tree[path] = new
        elif verb == "shell":
            token = rest.split("'")[1].strip("\\n")
            self.tokens[token] = self.tokens.get(token, 0) + 1
            for part in rest.split("; ")[1:]:
                if part.startswith("rm -f "):
                    self.tree.pop(part[6:], None)
                elif part.startswith("printf ") and " > " in part:
                    body, path = part[7:].split(" > ")
                    self.tree[path] = body.strip("'")

    def turn(self, text: str, user: Msg | Prefix | None = None) -> None:
        """Check the request a user message ``text`` started; note its reply."""
        self.tree_before[text] = dict(self.tree)
        self.aligned[text] = self.at_message
        got = self.expect([user or ("user", text)])
        self.view_before[text] = got[:-1]
        self.at_message = True
        self.history.append(text)
        self.users.append(text)
        reply = self.fake.replies[self.seen - 1]
        self.conv = [*got, reply_message(reply)]
        if reply["kind"] == "tools":
            self.waiting = {"text": text, "steers": []}

    def drained(self) -> None:
        """Run what the lane holds, as the app does after each run; check each turn."""
        assert self.handle is not None
        for run in self.handle.pending.drain():
            list(run)
        while self.waiting is None and self.queue and not self.queue[0][2]:
            _, text, _ = self.queue.pop(0)
            self.turn(text, self.attached(text))
        self.no_request_left()

    def no_request_left(self) -> None:
        if self.seen != len(self.fake.agent_requests):
            extra = [view(b)[-1] for b in self.fake.agent_requests[self.seen:]]
            self.fail(f"unexpected model requests: {extra}")

    def attached(self, text: str) -> Msg | Prefix:
        return Prefix("user", text + "\n") if "@" in text else ("user", text)

    def seq_of(self, text: str) -> int:
        records, _ = self.service.records(self.sid)
        msgs = fold(records).messages
        return next(i + 1 for i, m in enumerate(msgs)
                    if m.get("role") == "user" and m.get("content") == text)

    def open(self, sid: str, *, codes: tuple[str, ...] = ()) -> None:
        before = [w["code"] for w in recheck(self.home, self.project, sid)["warnings"]]
        if sorted(set(before)) != sorted(set(codes)):
            self.fail(f"resume-check before the resume: {before}, expected {codes}")
        self.handle = SessionHandle.open(self.service, self.settings, sid)
        self.sid = sid
        said = [w["code"] for w in self.handle.resume().warnings]
        if sorted(set(said)) != sorted(set(codes)):
            self.fail(f"the resume warned {said}, expected {codes}")
        after = recheck(self.home, self.project, sid)["warnings"]
        if after:
            self.fail(f"resume-check after the resume is not clean: {after}")

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    @property
    def idle(self) -> bool:
        return self.handle is not None and self.waiting is None

    # -- rules -----------------------------------------------------------------------
    @rule(verb=st.sampled_from(["chat", "write", "edit", "rm", "shell", "attach"]),
          path=st.sampled_from(FILES))
    def send(self, verb: str, path: str) -> None:
        if self.handle is None:
            self.step("create")
            text = self.text("chat")
            self.handle = SessionHandle.create(self.service, self.settings, text)
            self.sid = self.handle.session_id
        elif self.waiting is not None:
            return
        else:
            text = self.directive(verb, path)
            self.holding = False  # the user's own message ends a stop's hold on new items
        self.step(f"send {text!r}")
        list(self.handle.run(text))
        self.turn(text, self.attached(text))
        self.drained()

    def directive(self, verb: str, path: str) -> str:
        n = self.n + 1
        if verb == "write":
            return self.text(f"write {path} w{n}")
        if verb == "edit" and path in self.tree and self.tree[path]:
            return self.text(f"edit {path} {self.tree[path]} e{n}")
        path = path.split("/")[-1] if verb in ("rm", "shell") else path
        if verb == "rm":
            return self.text(f"shell printf 't{n}\\n' >> {self.ledger}; rm -f {path}")
        if verb == "shell":
            return self.text(f"shell printf 't{n}\\n' >> {self.ledger}; printf 's{n}' > {path}")
        if verb == "attach" and path in self.tree:
            return self.text(f"chat @{path}")
        return self.text("chat")

    @precondition(lambda self: self.waiting is not None)
    @rule(approve=st.booleans())
    def answer(self, approve: bool) -> None:
        assert self.handle is not None and self.waiting is not None
        request = self.handle.waiting_approval()
        if request is None:
            self.fail("the machine expects an approval the session does not wait for")
        self.step(f"{'approve' if approve else 'deny'}")
        waiting, self.waiting = self.waiting, None
        if approve:
            self.effects(waiting["text"])
            self.snapped.add(waiting["text"])
        list(self.handle.answer(request, ApprovalAnswer.for_all(request, approve)))
        calls = self.conv[-1][2]
        batch = waiting["steers"]  # one user message, texts joined (pending.md)
        got = self.expect([("tool", c) for c in calls]
                          + ([("user", "\n\n".join(batch))] if batch else []))
        for i, s in enumerate(batch):
            self.aligned[s] = True
            self.view_before[s] = got[:len(got) - 1] + [("user", t) for t in batch[:i]]
            self.tree_before[s] = dict(self.tree)
            self.history.append(s)
            self.users.append(s)
        self.conv = [*got, reply_message(self.fake.replies[self.seen - 1])]
        self.drained()

    @precondition(lambda self: self.handle is not None and (
        self.waiting is not None or self.holding) and len(self.queue) < 5)
    @rule(attach=st.booleans())
    def queue_add(self, attach: bool) -> None:
        assert self.handle is not None
        text = self.text("chat @f1.txt" if attach and "f1.txt" in self.tree else "chat")
        item = self.handle.pending.add(text)
        self.step(f"queue add {text!r}")
        self.queue.append([item.id, text, self.holding])

    @precondition(lambda self: self.handle is not None and bool(self.queue))
    @rule(data=st.data(), remove=st.booleans())
    def queue_change(self, data: st.DataObject, remove: bool) -> None:
        assert self.handle is not None
        item = data.draw(st.sampled_from(self.queue))
        if remove:
            self.step(f"queue remove {item[1]!r}")
            self.handle.pending.remove(item[0])
            self.queue.remove(item)
        else:
            item[1] = self.text("chat")
            self.step(f"queue edit -> {item[1]!r}")
            self.handle.pending.edit(item[0], item[1])

    @precondition(lambda self: self.idle and (self.holding or any(i[2] for i in self.queue)))
    @rule()
    def queue_resume(self) -> None:
        assert self.handle is not None
        self.step("queue resume")
        self.handle.pending.resume_queue()
        self.holding = False
        for item in self.queue:
            item[2] = False
        self.drained()

    @precondition(lambda self: self.waiting is not None and not self.holding)
    @rule()
    def steer(self) -> None:
        assert self.handle is not None and self.waiting is not None
        text = self.text("chat")
        self.step(f"steer {text!r}")
        self.handle.pending.steer(text)
        self.waiting["steers"].append(text)

    @precondition(lambda self: self.idle and not self.queue)
    @rule()
    def stop(self) -> None:
        """A slowly streamed answer stopped by the user (the lane is held after it)."""
        handle = self.handle
        assert handle is not None
        text = self.text("slow")
        self.step(f"send {text!r} and stop it")
        before = len(self.fake.agent_requests)
        worker = threading.Thread(target=lambda: list(handle.run(text)))
        worker.start()
        while len(self.fake.agent_requests) == before and worker.is_alive():
            time.sleep(0.01)
        time.sleep(0.1)
        handle.stop()
        worker.join(30)
        self.holding = True
        self.tree_before[text] = dict(self.tree)
        self.aligned[text] = self.at_message
        got = self.expect([("user", text)])
        self.view_before[text] = got[:-1]
        self.at_message = True
        self.history.append(text)
        self.users.append(text)
        self.conv = [*got, Prefix("assistant", "")]
        self.no_request_left()

    @precondition(lambda self: self.idle)
    @rule(path=st.sampled_from(FILES), delete=st.booleans())
    def user_edits(self, path: str, delete: bool) -> None:
        target = self.project / path
        if delete:
            self.step(f"user deletes {path}")
            target.unlink(missing_ok=True)
            self.tree.pop(path, None)
        else:
            self.n += 1
            self.step(f"user writes {path} = u{self.n}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"u{self.n}")
            self.tree[path] = f"u{self.n}"

    @precondition(lambda self: self.idle and not self.queue)
    @rule()
    def compact(self) -> None:
        assert self.handle is not None
        self.step("compact")
        list(self.handle.compact())
        self.loose, self.rewinds, self.at_message = True, [], False

    @precondition(lambda self: self.idle)
    @rule()
    def clear(self) -> None:
        assert self.handle is not None
        self.step("clear")
        clear_session(self.handle.runner, self.handle.pending)
        self.conv, self.loose, self.queue, self.rewinds = [], False, [], []
        self.cleared_at = len(self.users)
        self.clears.append(self.cleared_at)
        self.at_message = False

    @precondition(lambda self: self.idle and not self.queue)
    @rule(data=st.data(), mode=st.sampled_from(["conversation", "code", "both"]))
    def rewind(self, data: st.DataObject, mode: str) -> None:
        assert self.handle is not None
        pool = self.users[self.cleared_at:] if mode != "code" else self.users
        if not pool:
            return
        target = data.draw(st.sampled_from(pool))
        code, conversation = mode != "conversation", mode != "code"
        after = self.history[self.history.index(target):]
        snap = next((t for t in after if t in self.snapped), None)
        self.step(f"rewind {mode} to {target!r}")
        try:
            rewind_held(self.handle, self.service, self.settings, self.seq_of(target),
                        conversation=conversation, code=code)
        except RewindRefused as exc:
            if code and snap is None:
                return
            self.fail(f"rewind refused: {exc}")
        if code and snap is None:
            self.fail("a code rewind with no snapshot at or after its turn was done")
        self.rewinds.append((list(self.conv), list(self.users), dict(self.tree) if code else
                             None, self.loose, conversation))
        if code:
            assert snap is not None
            self.tree = dict(self.tree_before[snap])
            if tree(self.project) != self.tree:
                self.fail(f"code rewind to {target!r} gave {tree(self.project)}, "
                          f"expected {self.tree}")
        if conversation:
            self.conv, self.loose = list(self.view_before[target]), False
            self.users = self.users[:self.users.index(target)]
            self.at_message = False

    @precondition(lambda self: self.idle and bool(self.rewinds) and not self.queue)
    @rule()
    def undo(self) -> None:
        assert self.handle is not None
        self.step("undo")
        conv, users, files, loose, conversation = self.rewinds.pop()
        rewind_held(self.handle, self.service, self.settings, None)
        if conversation:
            self.conv, self.users, self.loose = conv, users, loose
            self.at_message = False
        if files is not None:
            self.tree = files

    @precondition(lambda self: self.idle and not self.queue)
    @rule(data=st.data(), last=st.booleans())
    def fork_and_go_on(self, data: st.DataObject, last: bool) -> None:
        """At the last message, or just before a user message that only messages
        preceded (a compaction, /clear or rewind in between has no message seq)."""
        assert self.handle is not None
        pool = [t for t in self.users if self.aligned.get(t) and self.seq_of(t) > 1]
        if (last or not pool) and not self.at_message:
            return
        target = None if last or not pool else data.draw(st.sampled_from(pool))
        at = None if target is None else self.seq_of(target) - 1
        self.step(f"fork at {at if at else 'the end'} ({target!r})")
        result = fork(self.service, self.settings, self.sid, at=at)
        if at is not None and result.seq != at:
            self.fail(f"fork at {at} moved to {result.seq}")
        self.close()
        if target is not None:
            self.conv, self.loose = list(self.view_before[target]), False
            self.users = self.users[:self.users.index(target)]
        self.history = list(self.users)
        self.snapped, self.interrupted, self.rewinds = set(), [], []
        self.clears = [c for c in self.clears if c < len(self.users)] or [0]
        self.cleared_at = self.clears[-1]
        self.holding, self.queue = False, []
        self.open(result.session_id)
        self.send("chat", FILES[0])  # the fork's next request: the source's view at SEQ

    @precondition(lambda self: self.idle and not self.queue)
    @rule()
    def restart(self) -> None:
        self.step("close and resume")
        self.close()
        self.holding = False
        self.open(self.sid)

    @precondition(lambda self: self.idle and not self.queue)
    @rule(path=st.sampled_from(FILES))
    def kill_mid_tool(self, path: str) -> None:
        """``mttui exec`` killed with SIGKILL while its shell tool sleeps; then resumed."""
        self.close()
        n, path = self.n + 1, path.split("/")[-1]
        text = self.text(f"shell printf 't{n}\\n' >> {self.ledger}; printf 'k{n}' > {path}; "
                         "sleep 5")
        self.step(f"exec {text!r}, kill -9 mid-tool, resume")
        env = cli_env(self.home, OPENAI_BASE_URL=self.fake.url, OPENAI_API_KEY="sk-test",
                      MTTUI_SANDBOX="off", MTTUI_MODEL="fake")
        proc = subprocess.Popen(
            [sys.executable, "-c", "from mttui.cli import main; main()", "exec", "--session",
             self.sid, "--approve", "all", text], cwd=self.project, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while f"t{n}" not in ledger_tokens(self.ledger) and time.monotonic() < deadline:
            if proc.poll() is not None:
                self.fail(f"exec ended ({proc.returncode}) before its tool ran")
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the exec and its tool, as a crash would
        proc.wait()
        self.turn(text)
        self.effects(text)
        self.snapped.add(text)
        call = self.conv[-1][2][0]
        self.waiting = None
        self.conv.append(("tool", call))
        self.interrupted.append(call)
        self.at_message = True
        self.holding = False
        self.open(self.sid, codes=("tool_interrupted",))

    @precondition(lambda self: self.idle and bool(self.interrupted))
    @rule(done=st.booleans())
    def ledger_settle(self, done: bool) -> None:
        assert self.handle is not None
        call = self.interrupted.pop(0)
        action = "mark-done" if done else "mark-failed"
        self.step(f"ledger {call} {action}")
        settle_open(self.handle.writer, self.service, self.settings,
                    self.service.get(self.sid), call, action, None)
        self.handle.runner.invalidate()
        self.conv.append(Prefix("system", f"Note: the interrupted tool call {call} "))

    # -- invariants --------------------------------------------------------------------
    @invariant()
    def files_as_modelled(self) -> None:
        if tree(self.project) != self.tree:
            self.fail(f"project files {tree(self.project)} != expected {self.tree}")
        if ledger_tokens(self.ledger) != self.tokens:
            self.fail(f"tools ran {ledger_tokens(self.ledger)}, expected {self.tokens}")

    @invariant()
    def snapshots_precede_their_turn(self) -> None:
        if not self.sid:
            return
        info = self.service.get(self.sid)
        records, _ = self.service.records(self.sid)
        msgs = fold(records).messages
        named: list[str] = []
        for cp in read_timeline(info.path, msgs).checkpoints:
            m = msgs[cp.seq - 1] if 1 <= cp.seq <= len(msgs) else {}
            text = str(m.get("content") or "")
            if m.get("role") != "user" or text not in self.tree_before:
                self.fail(f"snapshot {cp.ref} names message {cp.seq} ({m.get('role')}: "
                          f"{text!r}), not a user message of a turn")
            named.append(text)
            if snapshot_tree(self.home, self.project, cp.ref) != blobs(self.tree_before[text]):
                self.fail(f"snapshot before {text!r} is not the tree before it: "
                          f"expected {self.tree_before[text]}")
        if sorted(named) != sorted(self.snapped):
            self.fail(f"snapshots name {sorted(named)}, expected {sorted(self.snapped)}")

    @invariant()
    def index_equals_rebuild(self) -> None:
        if self.sid:
            index_equals_rebuild(self.home, self.tmp)

    def teardown(self) -> None:
        try:
            if self.idle and not self.holding and not self.queue:
                self.send("chat", FILES[0])  # the last view is checked too
        finally:
            self.close()
            self.fake.close()
            for k, v in self.saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            shutil.rmtree(self.tmp, ignore_errors=True)


def _run(examples: int, steps: int) -> None:
    machine = Features.TestCase
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if not os.environ.get("MTTUI_STATEFUL_NO_SHRINK"):
        phases.append(Phase.shrink)
    machine.settings = settings(max_examples=examples, stateful_step_count=steps,
                                deadline=None, phases=phases,
                                suppress_health_check=list(HealthCheck))
    machine().runTest()


def test_every_feature_together() -> None:
    _run(12, 15)


@pytest.mark.slow
def test_every_feature_together_long() -> None:
    _run(int(os.environ.get("MTTUI_STATEFUL_EXAMPLES", "300")), 40)
