"""Every feature at once, as a state machine: send (tools that write, edit, delete), queue
add/edit/remove/resume, steer, approve/deny, stop, kill -9 and resume, compact, /clear,
rewind (conversation / code / both) and undo, fork (then on in the fork), ledger settle,
the user's file edits, ``@file``. The machine models the files, what the model receives
next, each user message's tree and view; the product must agree after every step."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mttui.config import Settings
from mttui.core.clear import clear_session
from mttui.core.fork import fork
from mttui.core.handle import ApprovalAnswer, SessionHandle
from mttui.core.ledger import settle_open
from mttui.core.rewind import RewindRefused, rewind_held
from mttui.session.service import SessionService
from tests.support import stateful as sm
from tests.support.resume import index_equals_rebuild
from tests.support.stateful import Msg, Prefix

FILES = ["f1.txt", "f2.txt", "sub/f3.txt"]


class Features(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp, self.saved_env = sm.new_home()
        self.home, self.project = self.tmp / "home", self.tmp / "project"
        self.ledger = self.tmp / "ledger"  # outside the project: no rewind touches it
        self.fake = sm.DirectedOpenAI()
        self.settings = Settings(provider="openai", model="fake", base_url=self.fake.url,
                                 api_key="sk-test", approval="ask", sandbox="off",
                                 max_retries=0, timeout=20.0)
        self.service = SessionService(self.home, self.project)
        self.n = self.seen = 0  # texts made; model requests checked
        self.conv: list[Any] = []  # what the model receives next, before the new input
        self.loose = False  # a compaction happened: a summary + a suffix of conv expected
        self.tree: dict[str, str] = {}  # the project's files
        self.tokens: dict[str, int] = {}  # how often each shell command ran
        # per user text: the model's view and the project's files just before it was
        # sent, and whether only messages came before it (not a compaction, …)
        self.view_before: dict[str, list[Any]] = {}
        self.tree_before: dict[str, dict[str, str]] = {}
        self.aligned: dict[str, bool] = {}
        self.history: list[str] = []  # user texts as ``history`` numbers them
        self.users: list[str] = []  # user texts of the live branch
        self.clears: list[int] = []  # len(users) at each /clear
        self.cleared_at = 0  # users[cleared_at:] came after the last /clear
        self.at_message = True  # the view changed last by a message (not a rewind, …)
        self.snapped: set[str] = set()  # user texts whose turn has a file snapshot
        self.waiting: dict[str, Any] | None = None  # calls awaiting approval
        self.queue: list[list[Any]] = []  # [item id, text, held]
        self.holding = False
        self.rewinds: list[tuple[Any, ...]] = []  # what an undo brings back
        self.interrupted: list[str] = []  # unsettled calls
        self.handle: SessionHandle | None = None
        self.sid, self.log = "", []

    def text(self, verb: str) -> str:
        self.n += 1
        return f"K{self.n} {verb}".rstrip()

    def fail(self, why: str | None) -> None:
        if why:  # with the steps so far, as the shrunk example names only the rules
            raise AssertionError(f"{why}\nsteps:\n  " + "\n  ".join(self.log))

    def expect(self, tail: list[Any]) -> list[Msg]:
        """The next request is conv + tail (after a compaction: summary + suffix + tail)."""
        got, wrong = sm.next_view(self.fake, self.seen, self.conv, tail, self.loose)
        self.fail(wrong)
        self.seen, self.loose = self.seen + 1, False
        return got

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
        self.conv = [*got, sm.reply_message(reply)]
        if reply["kind"] == "tools":
            self.waiting = {"text": text, "steers": []}

    def drained(self) -> None:
        """Run what the lane holds, as the app does after each run; check each turn."""
        for run in self.h.pending.drain():
            list(run)
        while self.waiting is None and self.queue and not self.queue[0][2]:
            text = self.queue[0][1]
            if text.partition("@")[2] not in ("", *self.tree):  # not sent: needs a retry
                self.queue[0][2] = True
                break
            self.turn(self.queue.pop(0)[1], self.attached(text))
        self.no_request_left()

    def no_request_left(self) -> None:
        extra = [sm.view(b)[-1] for b in self.fake.agent_requests[self.seen:]]
        self.fail(f"unexpected model requests: {extra}" if extra else None)

    def attached(self, text: str) -> Msg:  # the model reads the file as it is now
        path = text.partition("@")[2]
        return ("user", f'{text}\n\n<file path="{path}">\n{self.tree[path]}\n</file>'
                if path else text)

    def seq_of(self, text: str) -> int:  # its number in ``history``
        return sm.seq_of(self.service, self.sid, text)

    @property
    def h(self) -> SessionHandle:
        assert self.handle is not None
        return self.handle

    def open(self, sid: str, *, codes: tuple[str, ...] = ()) -> None:
        """Open and resume ``sid``: the check before says ``codes``, after it nothing."""
        self.sid = sid
        self.handle, wrong = sm.resumed(self.service, self.settings, sid, codes)
        self.fail(wrong)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    @property
    def idle(self) -> bool:
        return self.handle is not None and self.waiting is None

    @rule(verb=st.sampled_from(["chat", "write", "edit", "rm", "shell", "attach"]),
          path=st.sampled_from(FILES))
    def send(self, verb: str, path: str) -> None:
        if self.handle is None:
            self.log.append("create")
            text = self.text("chat")
            self.handle = SessionHandle.create(self.service, self.settings, text)
            self.sid = self.handle.session_id
        elif self.waiting is not None:
            return
        else:
            self.n += 1
            text = sm.directive(self.n, verb, path, self.tree, self.ledger)
            self.holding = False  # the user's own message ends a stop's hold on new items
        self.log.append(f"send {text!r}")
        list(self.h.run(text))
        self.turn(text, self.attached(text))
        self.drained()

    @precondition(lambda self: self.waiting is not None)
    @rule(approve=st.booleans())
    def answer(self, approve: bool) -> None:
        assert self.waiting is not None
        request = self.h.waiting_approval()
        self.fail("the session does not wait for an approval" if request is None else None)
        assert request is not None
        self.log.append(f"{'approve' if approve else 'deny'}")
        waiting, self.waiting = self.waiting, None
        if approve:
            sm.apply_effects(waiting["text"], self.tree, self.tokens)
            self.snapped.add(waiting["text"])
        list(self.h.answer(request, ApprovalAnswer.for_all(request, approve)))
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
        self.conv = [*got, sm.reply_message(self.fake.replies[self.seen - 1])]
        self.drained()

    @precondition(lambda self: self.handle is not None and (
        self.waiting is not None or self.holding) and len(self.queue) < 5)
    @rule(attach=st.booleans())
    def queue_add(self, attach: bool) -> None:
        text = self.text("chat @f1.txt" if attach and "f1.txt" in self.tree else "chat")
        item = self.h.pending.add(text)
        self.log.append(f"queue add {text!r}")
        self.queue.append([item.id, text, self.holding])

    @precondition(lambda self: self.handle is not None and bool(self.queue))
    @rule(data=st.data(), remove=st.booleans())
    def queue_change(self, data: st.DataObject, remove: bool) -> None:
        item = data.draw(st.sampled_from(self.queue))
        if remove:
            self.log.append(f"queue remove {item[1]!r}")
            self.h.pending.remove(item[0])
            self.queue.remove(item)
        else:
            item[1] = self.text("chat")
            self.log.append(f"queue edit -> {item[1]!r}")
            self.h.pending.edit(item[0], item[1])

    @precondition(lambda self: self.idle and (self.holding or any(i[2] for i in self.queue)))
    @rule()
    def queue_resume(self) -> None:
        self.log.append("queue resume")
        self.h.pending.resume_queue()
        self.holding = False
        for item in self.queue:
            item[2] = False
        self.drained()

    @precondition(lambda self: self.waiting is not None and not self.holding)
    @rule()
    def steer(self) -> None:
        assert self.waiting is not None
        text = self.text("chat")
        self.log.append(f"steer {text!r}")
        self.h.pending.steer(text)
        self.waiting["steers"].append(text)

    @precondition(lambda self: self.idle and not self.queue)
    @rule()
    def stop(self) -> None:
        """A slowly streamed answer stopped by the user (the lane is held after it)."""
        text = self.text("slow")
        self.log.append(f"send {text!r} and stop it")
        sm.run_and_stop(self.h, self.fake, text)
        self.turn(text)
        self.conv[-1] = Prefix("assistant", "", optional=True)  # the partial answer if any
        self.holding = True
        self.no_request_left()

    @precondition(lambda self: self.idle)
    @rule(path=st.sampled_from(FILES), delete=st.booleans())
    def user_edits(self, path: str, delete: bool) -> None:
        self.n += 1
        content = None if delete else f"u{self.n}"
        self.log.append(f"user writes {path} = {content}")
        sm.user_edit(self.project, self.tree, path, content)

    @precondition(lambda self: self.idle and not self.queue)
    @rule()
    def compact(self) -> None:
        self.log.append("compact")
        list(self.h.compact())
        self.loose, self.rewinds, self.at_message = True, [], False

    @precondition(lambda self: self.idle)
    @rule()
    def clear(self) -> None:
        self.log.append("clear")
        clear_session(self.h.runner, self.h.pending)
        self.conv, self.loose, self.queue, self.rewinds, self.at_message = [], False, [], [], False
        self.cleared_at = len(self.users)
        self.clears.append(self.cleared_at)

    @precondition(lambda self: self.idle and not self.queue)
    @rule(data=st.data(), mode=st.sampled_from(["conversation", "code", "both"]))
    def rewind(self, data: st.DataObject, mode: str) -> None:
        pool = self.users[self.cleared_at:] if mode != "code" else self.users
        if not pool:
            return
        target = data.draw(st.sampled_from(pool))
        code, conversation = mode != "conversation", mode != "code"
        after = self.history[self.history.index(target):]
        snap = next((t for t in after if t in self.snapped), None)
        self.log.append(f"rewind {mode} to {target!r}")
        try:
            rewind_held(self.h, self.service, self.settings, self.seq_of(target),
                        conversation=conversation, code=code)
        except RewindRefused as exc:
            if code and snap is None:
                return
            self.fail(f"rewind refused: {exc}")
        self.fail("a code rewind with no snapshot at or after its turn was done"
                  if code and snap is None else None)
        self.rewinds.append((list(self.conv), list(self.users), dict(self.tree) if code else
                             None, self.loose, conversation))
        if code:
            assert snap is not None
            self.tree = dict(self.tree_before[snap])  # checked by files_as_modelled
        if conversation:
            self.conv, self.loose, self.at_message = list(self.view_before[target]), False, False
            self.users = self.users[:self.users.index(target)]

    @precondition(lambda self: self.idle and bool(self.rewinds) and not self.queue)
    @rule()
    def undo(self) -> None:
        self.log.append("undo")
        conv, users, files, loose, conversation = self.rewinds.pop()
        rewind_held(self.h, self.service, self.settings, None)
        if conversation:
            self.conv, self.users, self.loose, self.at_message = conv, users, loose, False
        if files is not None:
            self.tree = files

    @precondition(lambda self: self.idle and not self.queue)
    @rule(data=st.data(), last=st.booleans())
    def fork_and_go_on(self, data: st.DataObject, last: bool) -> None:
        """At the end, or before a user message only messages preceded (a compaction,
        /clear or rewind in between has no message seq)."""
        pool = [t for t in self.users if self.aligned.get(t) and self.seq_of(t) > 1]
        if (last or not pool) and not self.at_message:
            return
        target = None if last or not pool else data.draw(st.sampled_from(pool))
        at = None if target is None else self.seq_of(target) - 1
        self.log.append(f"fork at {at if at else 'the end'} ({target!r})")
        result = fork(self.service, self.settings, self.sid, at=at)
        self.fail(f"fork at {at} moved to {result.seq}" if at and result.seq != at else None)
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
        self.log.append("close and resume")
        self.close()
        self.holding = False
        self.open(self.sid)

    @precondition(lambda self: self.idle and not self.queue)
    @rule(path=st.sampled_from(FILES))
    def kill_mid_tool(self, path: str) -> None:
        """``mttui exec`` killed with SIGKILL while its shell tool sleeps; then resumed."""
        self.close()
        n, path = self.n + 1, path.split("/")[-1]
        text = self.text(f"shell printf 'k{n}' > {path}; printf 't{n}\\n' >> {self.ledger}; "
                         "sleep 5")  # killed once the token is in the ledger: the file first
        self.log.append(f"exec {text!r}, kill -9 mid-tool, resume")
        self.fail(sm.exec_killed(self.home, self.project, self.sid, self.fake.url, text,
                                 self.ledger, f"t{n}"))
        self.turn(text)
        sm.apply_effects(text, self.tree, self.tokens)
        self.snapped.add(text)
        call = self.conv[-1][2][0]
        self.conv.append(("tool", call))  # closed by the resume
        self.interrupted.append(call)
        self.waiting, self.holding = None, False
        self.open(self.sid, codes=("tool_interrupted",))

    @precondition(lambda self: self.idle and bool(self.interrupted))
    @rule(done=st.booleans())
    def ledger_settle(self, done: bool) -> None:
        call = self.interrupted.pop(0)
        action = "mark-done" if done else "mark-failed"
        self.log.append(f"ledger {call} {action}")
        settle_open(self.h.writer, self.service, self.settings,
                    self.service.get(self.sid), call, action, None)
        self.h.runner.invalidate()
        self.conv.append(Prefix("system", f"Note: the interrupted tool call {call} "))

    @invariant()
    def files_as_modelled(self) -> None:
        if sm.tree(self.project) != self.tree:
            self.fail(f"project files {sm.tree(self.project)} != expected {self.tree}")
        if sm.ledger_tokens(self.ledger) != self.tokens:
            self.fail(f"tools ran {sm.ledger_tokens(self.ledger)}, expected {self.tokens}")

    @invariant()
    def snapshots_precede_their_turn(self) -> None:
        if self.sid:
            self.fail(sm.snapshot_problem(self.service, self.sid, self.tree_before,
                                          self.snapped))

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
            sm.drop_home(self.tmp, self.saved_env)


def test_every_feature_together() -> None:
    sm.run_machine(Features, 12, 15)


@pytest.mark.slow
def test_every_feature_together_long() -> None:
    sm.run_machine(Features, int(os.environ.get("MTTUI_STATEFUL_EXAMPLES", "300")), 40)
