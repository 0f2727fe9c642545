"""Helpers for the compression tests (no tests here).

``RoutedOpenAI``: the scripted server of ``fake_openai``, with summary requests
(the compression system prompt) answered from their own script, so a test does
not need to know when compression fires. Fixture ``routed`` (import
``routed_fixture``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, text

from mttui.graph.compression.prompt import COMPRESS_MARKER
from mttui.graph.compression.summary import SUMMARY_HEADER
from mttui.session.reader import read_all

FILLER = "The parser keeps a table of token kinds; every kind has a fixed width. "


class RoutedOpenAI(FakeOpenAI):
    """``add`` scripts the agent's calls, ``summaries`` the compression summaries."""

    def __init__(self) -> None:
        self.summaries: list[dict[str, Any]] = []
        self.summary_requests: list[dict[str, Any]] = []
        self.agent_requests: list[dict[str, Any]] = []
        super().__init__()

    def summary(self, *replies: dict[str, Any]) -> RoutedOpenAI:
        with self._lock:
            self.summaries.extend(replies)
        return self

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        if not is_summary_request(body):
            with self._lock:
                self.agent_requests.append(body)
            return super()._next(body, headers)
        with self._lock:
            self.requests.append(body)
            self.summary_requests.append(body)
            n = len(self.summary_requests)
            return self.summaries.pop(0) if self.summaries else text(snapshot_text(n), usage=None)


def snapshot_text(n: int, goal: str = "keep going") -> str:
    return (f"<compressed_snapshot><current_goal>- {goal}</current_goal>"
            f"<key_knowledge>- snapshot number {n}</key_knowledge></compressed_snapshot>")


@pytest.fixture(name="routed")
def routed_fixture() -> Iterator[RoutedOpenAI]:
    server = RoutedOpenAI()
    try:
        yield server
    finally:
        server.close()


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return COMPRESS_MARKER in str(messages[0].get("content") or "")


def is_summary_message(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and str(message.get("content") or "").startswith(
        SUMMARY_HEADER
    )


def records(path: Path, kind: str) -> list[dict[str, Any]]:
    return [r for r in read_all(path)[0] if r["type"] == kind]


def transcript(path: Path) -> list[dict[str, Any]]:
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


def ids_of(body_messages: list[dict[str, Any]], log: list[dict[str, Any]]) -> list[str]:
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
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MTTUI_"))}
    env.update(MTTUI_HOME=str(home), MTTUI_CONFIG=str(home.parent / "none.toml"),
               MTTUI_MAX_RETRIES="0", MTTUI_TIMEOUT="20")  # fmt: skip
    env.update(extra)
    return env


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
