"""Model providers: the offline model and ChatOpenAI against the scripted server."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from mttui.config import Settings
from mttui.graph.compression.prompt import compress_request
from mttui.graph.models import OFFLINE_HELP, ModelConfigError, describe_model_error, make_model
from mttui.graph.models.offline import OfflineChatModel, parse_triggers
from mttui.graph.tools import TOOL_SCHEMAS
from tests.support.fake_openai import FakeOpenAI, error, hang, text, tools


def _stream(model: Any, messages: list[Any]) -> Any:
    acc = None
    pieces = 0
    for chunk in model.stream(messages):
        pieces += 1
        acc = chunk if acc is None else acc + chunk
    return acc, pieces


def test_trigger_syntax() -> None:
    assert parse_triggers("!ls -la") == [("shell", {"command": "ls -la"})]
    assert parse_triggers("/read a.py\n/ls\n/grep TODO") == [
        ("read_file", {"path": "a.py"}),
        ("list_dir", {"path": "."}),
        ("search_files", {"pattern": "TODO"}),
    ]
    assert parse_triggers("/write notes.md # Title\nbody") == [
        ("write_file", {"path": "notes.md", "content": "# Title\nbody\n"})  # ends a line
    ]
    assert parse_triggers("/edit a.py x = 1 => x = 2") == [
        ("edit_file", {"path": "a.py", "old": "x = 1", "new": "x = 2"})
    ]
    assert parse_triggers("just a question") == []
    assert "!COMMAND" in OFFLINE_HELP and "/edit" in OFFLINE_HELP


def test_offline_streams_tool_calls_with_usage() -> None:
    model = OfflineChatModel().bind_tools(TOOL_SCHEMAS)
    msg, _ = _stream(model, [HumanMessage("!echo hi\n/read a.txt", id="msg-1")])
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [
        ("shell", {"command": "echo hi"}),
        ("read_file", {"path": "a.txt"}),
    ]
    assert msg.usage_metadata["input_tokens"] > 0 and msg.usage_metadata["output_tokens"] > 0
    again, _ = _stream(model, [HumanMessage("!echo hi\n/read a.txt", id="msg-1")])
    assert [c["id"] for c in again.tool_calls] == [c["id"] for c in msg.tool_calls]


def test_offline_answer_is_streamed_markdown() -> None:
    msg, pieces = _stream(OfflineChatModel(), [HumanMessage("tell me about sessions")])
    assert pieces > 10 and msg.content.startswith("## Offline answer")
    assert "tell me about sessions" in msg.content and not msg.tool_calls


def test_offline_summarizes_tool_results() -> None:
    convo = [
        HumanMessage("!ls"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "shell", "args": {"command": "ls"}}]),
        ToolMessage("a.txt\nb.txt\n", tool_call_id="c1", name="shell"),
    ]
    msg, _ = _stream(OfflineChatModel(), convo)
    assert "Ran 1 tool call" in msg.content and "`shell` — success, 2 lines: a.txt" in msg.content


def test_offline_compression_snapshot() -> None:
    convo = [
        SystemMessage(compress_request("keep the file names")),
        HumanMessage("please fix parser.py"),
        AIMessage(
            "", tool_calls=[{"id": "c1", "name": "read_file", "args": {"path": "parser.py"}}]
        ),
        ToolMessage("def parse(): ...", tool_call_id="c1", name="read_file"),
    ]
    msg, _ = _stream(OfflineChatModel(), convo)
    body = msg.content
    assert body.startswith("<compressed_snapshot>") and body.endswith("</compressed_snapshot>")
    for section in ("current_goal", "file_state", "open_tasks", "important_tool_results"):
        assert f"<{section}>" in body
    assert "please fix parser.py" in body and "read_file parser.py" in body


def test_openai_needs_a_key_or_url() -> None:
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        make_model(Settings(provider="openai", model="m"))


def _openai(url: str, **kw: Any) -> Any:
    settings = Settings(
        provider="openai",
        model="fake-model",
        base_url=url,
        api_key="sk-test",
        max_retries=0,
        timeout=kw.pop("timeout", 5.0),
    )
    return make_model(settings).bind_tools(TOOL_SCHEMAS)


def test_openai_streams_text_parallel_tool_calls_and_usage(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(
        text("Hello from the fake server", usage=(21, 5)),
        tools(
            [
                ("call_a", "shell", {"command": "ls -la"}),
                ("call_b", "read_file", {"path": "x.py", "limit": 3}),
            ],
            content="Let me look.",
        ),
    )
    model = _openai(fake_openai.url)
    first, pieces = _stream(model, [HumanMessage("hi")])
    assert first.content == "Hello from the fake server" and pieces >= 4
    assert first.usage_metadata["input_tokens"] == 21
    assert first.usage_metadata["output_tokens"] == 5
    second, _ = _stream(model, [HumanMessage("go")])
    assert second.content == "Let me look."
    assert [(c["id"], c["name"], c["args"]) for c in second.tool_calls] == [
        ("call_a", "shell", {"command": "ls -la"}),
        ("call_b", "read_file", {"path": "x.py", "limit": 3}),
    ]
    body = fake_openai.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in body["tools"]} >= {"shell", "edit_file"}
    assert fake_openai.headers[0].get("authorization") == "Bearer sk-test"


def test_openai_errors_are_one_readable_line(fake_openai: FakeOpenAI, closed_port: str) -> None:
    fake_openai.add(error(500, "the server broke"), hang(3))
    model = _openai(fake_openai.url, timeout=0.5)
    with pytest.raises(Exception) as e500:
        _stream(model, [HumanMessage("x")])
    line = describe_model_error(e500.value, fake_openai.url)
    assert line.startswith("model request failed: HTTP 500") and "the server broke" in line
    with pytest.raises(Exception) as slow:
        _stream(model, [HumanMessage("x")])
    assert "timed out" in describe_model_error(slow.value)
    with pytest.raises(Exception) as refused:
        _stream(_openai(closed_port), [HumanMessage("x")])
    text_ = describe_model_error(refused.value, closed_port)
    assert text_.startswith("cannot reach the model server at " + closed_port)
    assert "\n" not in text_
