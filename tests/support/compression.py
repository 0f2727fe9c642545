"""Helpers for the compression tests (no tests here).

``RoutedOpenAI``: the scripted server of ``fake_openai``, with summary requests
(the compression system prompt) answered from their own script, so a test does
not need to know when compression fires (fixture ``routed``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mttui.graph.compression.prompt import COMPRESS_MARKER
from mttui.graph.compression.summary import SUMMARY_HEADER
from mttui.session.record_types import Message
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.logs import records
from tests.support.resume import env

FILLER = "The parser keeps a table of token kinds; every kind has a fixed width. "


class RoutedOpenAI(FakeOpenAI):
    """``add`` scripts the agent's calls, ``summaries`` the compression summaries."""

    def __init__(self) -> None:
        self.summaries: list[dict[str, Any]] = []
        self.summary_requests: list[dict[str, Any]] = []
        self.agent_requests: list[dict[str, Any]] = []
        super().__init__()

    def summary(self, *replies: dict[str, Any]) -> RoutedOpenAI:
        with self.lock:
            self.summaries.extend(replies)
        return self

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        if not is_summary_request(body):
            with self.lock:
                self.agent_requests.append(body)
            return super().next_reply(body, headers)
        with self.lock:
            self.requests.append(body)
            self.summary_requests.append(body)
            n = len(self.summary_requests)
            return self.summaries.pop(0) if self.summaries else text(snapshot_text(n), usage=None)


def snapshot_text(n: int, goal: str = "keep going") -> str:
    return (f"<compressed_snapshot><current_goal>- {goal}</current_goal>"
            f"<key_knowledge>- snapshot number {n}</key_knowledge></compressed_snapshot>")


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return COMPRESS_MARKER in str(messages[0].get("content") or "")


def is_summary_message(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and str(message.get("content") or "").startswith(
        SUMMARY_HEADER
    )


def transcript(path: Path) -> list[Message]:
    return [r["message"] for r in records(path, "transcript_message")]


def after_summary(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A request's messages after the system prompt and the summary (if any)."""
    messages = list(body["messages"])
    assert messages[0]["role"] == "system"
    rest = messages[1:]
    if rest and is_summary_message(rest[0]):
        rest = rest[1:]
    assert not any(is_summary_message(m) for m in rest), "a summary out of place"
    return rest


def assert_pairs(body: dict[str, Any]) -> None:
    """Every assistant tool call has its result in the same request, right after it,
    and every tool result answers a call (what an OpenAI server would check)."""
    messages = body["messages"]
    for i, m in enumerate(messages):
        calls = [c["id"] for c in m.get("tool_calls") or []]
        if calls:
            answers = [x.get("tool_call_id") for x in messages[i + 1 : i + 1 + len(calls)]]
            assert sorted(answers) == sorted(calls), f"calls {calls} answered by {answers}"
        if m["role"] == "tool":
            owner = [x for x in messages[:i] if m["tool_call_id"] in
                     [c["id"] for c in x.get("tool_calls") or []]]
            assert owner, f"tool result {m['tool_call_id']} answers no call"


def ids_of(body_messages: list[dict[str, Any]], log: Sequence[Mapping[str, Any]]) -> list[str]:
    """Transcript ids of request messages: tool results by call id, assistant tool
    calls by their call ids, everything else by role and exact text (unique in
    these tests)."""
    by_key: dict[tuple[str, str], str] = {}
    for m in log:
        if m["role"] == "tool":
            key = ("tool", m["tool_call_id"])
        elif m.get("tool_calls"):
            key = ("calls", ",".join(c["id"] for c in m["tool_calls"]))
        else:
            key = (m["role"], m["content"])
        assert key not in by_key, f"ambiguous transcript message {key}"
        by_key[key] = m["id"]
    out = []
    for m in body_messages:
        if m["role"] == "tool":
            key = ("tool", m["tool_call_id"])
        elif m.get("tool_calls"):
            key = ("calls", ",".join(c["id"] for c in m["tool_calls"]))
        else:
            key = (m["role"], m["content"] or "")
        out.append(by_key[key])
    return out


def wait_until(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment, with a longer model timeout (summaries are long requests)."""
    return env(home, **{"MTTUI_TIMEOUT": "20", **extra})


def checkpoint_view(runner: Any) -> list[Any]:
    """The messages of the runner's checkpoint (what the model sees next)."""
    return list(runner.graph.get_state(runner.config).values["messages"])


def reference_cut(messages: list[Any], keep_budget: int) -> tuple[int, list[Any], int] | None:
    """The cut as the forward selection chose it (every safe point, suffix sums over the
    whole history): ``(len(older), kept, removed)``. What the tail walk must equal."""
    from mttui.graph.compression.cut import is_request, is_summary, safe_points
    from mttui.graph.tokens import message_tokens

    requests = [i for i, m in enumerate(messages) if is_request(m)]
    if not requests:
        return None
    last = requests[-1]
    points = safe_points(messages)
    tail = messages[-1]
    finished = tail.type == "ai" and not getattr(tail, "tool_calls", None)
    candidates = [p for p in points if (p <= last and is_request(messages[p]))
                  or (p > last + 1 and not finished)]  # fmt: skip
    if not candidates:
        return None
    suffix = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + message_tokens(messages[i])
    lifted = suffix[last] - suffix[last + 1]

    def kept_tokens(p: int) -> int:
        return suffix[p] + (lifted if p > last else 0)

    cut = next((p for p in candidates if kept_tokens(p) <= keep_budget), candidates[-1])
    removed = sum(1 for i, m in enumerate(messages[:cut]) if not is_summary(m) and i != last)
    if removed == 0:
        return None
    return cut, ([messages[last]] if cut > last else []) + messages[cut:], removed


def conversation(spec: Sequence[tuple[int, Sequence[int]]], summary: bool,
                 output: int = 200) -> list[Any]:
    """Paired messages from ``[(request size, [calls per step; 0 = an answer])]``."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    out: list[Any] = []
    if summary:
        out.append(HumanMessage(SUMMARY_HEADER + "s" * 80, id="summary-0"))
    n = 0
    for size, steps in spec:
        n += 1
        out.append(HumanMessage(f"request {n} " + "r" * size, id=f"u{n}"))
        for calls in steps:
            n += 1
            if not calls:
                out.append(AIMessage("answer " + "a" * 60, id=f"a{n}"))
                continue
            ids = [f"call_{n}_{k}" for k in range(calls)]
            out.append(AIMessage("", id=f"a{n}", tool_calls=[
                {"id": c, "name": "shell", "args": {"command": "ls " * (n % 7)}} for c in ids]))
            out += [ToolMessage("o" * (output + 13 * k), tool_call_id=c, id=f"t{c}")
                    for k, c in enumerate(ids)]
    return out


class Counted:
    """A duck-typed message that counts every read of its content and its id."""

    reads = 0

    def __init__(self, kind: str, ident: str, text: str, **extra: Any) -> None:
        self.type = kind
        self._id = ident
        self._text = text
        self.tool_calls: list[dict[str, Any]] = extra.get("tool_calls", [])
        self.tool_call_id: str = extra.get("tool_call_id", "")

    @property
    def content(self) -> str:
        Counted.reads += 1
        return self._text

    @property
    def id(self) -> str:
        Counted.reads += 1
        return self._id
