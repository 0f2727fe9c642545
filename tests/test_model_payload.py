"""The chat request's messages and tools go to the server as LangChain builds them,
without the ``openai`` client's per-request parameter walk (a cost that grows with
every message of the view): the same JSON body, the walk never sees them, and the
walk is still an identity on such parameters (if a client version ever changes
them, this fails first)."""

from __future__ import annotations

import threading
from typing import Any

import openai.resources.chat.completions.completions as completions
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from openai._utils._transform import maybe_transform
from openai.types.chat import completion_create_params as params

from mttui.config import load_settings
from mttui.graph.models import make_model
from mttui.graph.reasoning import call_model
from mttui.graph.tools import TOOL_SCHEMAS
from tests.support.fake_openai import FakeOpenAI, text

PICTURE = "data:image/png;base64,AAAA"
CONVERSATION = [
    SystemMessage("you are terse"),
    HumanMessage("read a.py"),
    AIMessage("", id="msg-a", tool_calls=[{"id": "call_1", "name": "read_file",
                                           "args": {"path": "a.py"}}]),
    ToolMessage("def f():\n    return 'é ✓ 缓存'\n", tool_call_id="call_1", id="msg-t"),
    HumanMessage(content=[{"type": "text", "text": "and this picture"},
                          {"type": "image_url", "image_url": {"url": PICTURE}}]),
]


def _settings(url: str, **extra: Any) -> Any:
    settings = load_settings({"provider": "openai", "base_url": url, "api_key": "k",
                              "model": "m"})
    return settings.with_overrides(max_retries=0, **extra)


def _body(model: Any, server: FakeOpenAI) -> dict[str, Any]:
    server.add(text("ok"))
    result = call_model(model.bind_tools(TOOL_SCHEMAS), CONVERSATION, threading.Event(),
                        lambda _e: None)  # fmt: skip
    assert result.error is None, result.error
    return server.requests[-1]


def test_the_server_gets_the_same_body(fake_openai: FakeOpenAI) -> None:
    plain = ChatOpenAI(model="m", base_url=fake_openai.url, api_key="k",  # type: ignore[arg-type]
                       streaming=True, stream_usage=True, max_retries=0)
    ours = make_model(_settings(fake_openai.url))
    assert type(ours) is not ChatOpenAI and isinstance(ours, ChatOpenAI)
    assert _body(ours, fake_openai) == _body(plain, fake_openai)
    body = fake_openai.requests[-1]
    assert len(body["messages"]) == 5 and len(body["tools"]) == len(TOOL_SCHEMAS)


def test_the_client_walk_never_sees_the_messages(
        fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    walk = completions.async_maybe_transform

    async def recorded(data: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(dict(data))
        return await walk(data, *args, **kwargs)

    monkeypatch.setattr(completions, "async_maybe_transform", recorded)
    body = _body(make_model(_settings(fake_openai.url)), fake_openai)
    assert seen and seen[-1]["messages"] == [] and not isinstance(seen[-1]["tools"], list)
    assert body["messages"][1] == {"role": "user", "content": "read a.py"}


def test_the_walk_changes_nothing_in_chat_parameters() -> None:
    model = make_model(_settings("http://127.0.0.1:9/v1")).bind_tools(TOOL_SCHEMAS)
    payload = model.bound._get_request_payload(CONVERSATION, **model.kwargs)
    sent = {**payload, **payload.pop("extra_body")}
    assert sent["messages"] and sent["tools"]
    assert maybe_transform(sent, params.CompletionCreateParamsStreaming) == sent


def test_a_configured_extra_body_still_wins(fake_openai: FakeOpenAI) -> None:
    model = make_model(_settings(fake_openai.url))
    model = model.model_copy(update={"extra_body": {"ttl": 300, "tools": []}})
    body = _body(model, fake_openai)
    assert body["ttl"] == 300 and body["tools"] == []
    assert body["messages"][0] == {"role": "system", "content": "you are terse"}
