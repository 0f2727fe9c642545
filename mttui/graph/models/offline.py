"""The offline model: a deterministic LangChain chat model, no network, no key.

It exists so that the app, the demo and the tests run on a fresh machine, and
so that approvals, tools, compression and resume can all be shown offline.

Trigger syntax (a user message whose lines start with these becomes tool calls;
several trigger lines give several parallel calls in one step):

``!COMMAND``                 run COMMAND with the ``shell`` tool
``/read PATH``               ``read_file``
``/ls [PATH]``               ``list_dir``
``/grep PATTERN``            ``search_files``
``/write PATH TEXT``         ``write_file`` (TEXT is the rest of the message, newlines included)
``/edit PATH OLD => NEW``    ``edit_file`` (exact, unique replacement)

After tool results it answers with a short summary of them. Asked for a
compression summary (``compression.prompt``) it returns a ``<compressed_snapshot>``
built from the messages. Anything else gets a deterministic echo-style answer
in Markdown.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from ..compression.prompt import COMPRESS_MARKER
from ..tokens import estimate_tokens, text_tokens
from .offline_text import OFFLINE_HELP, echo_answer, snapshot, summarize_results

__all__ = ["OFFLINE_HELP", "OfflineChatModel", "parse_triggers"]


def parse_triggers(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a user message asks for (empty when it is not a trigger)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    lines = text.strip().splitlines()
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("!") and len(line) > 1:
            calls.append(("shell", {"command": line[1:].strip()}))
            continue
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word == "/read" and rest:
            calls.append(("read_file", {"path": rest}))
        elif word == "/ls":
            calls.append(("list_dir", {"path": rest or "."}))
        elif word == "/grep" and rest:
            calls.append(("search_files", {"pattern": rest}))
        elif word == "/write" and rest:
            path, _, first = rest.partition(" ")
            content = "\n".join([first, *lines[i + 1 :]]) if first else "\n".join(lines[i + 1 :])
            if content and not content.endswith("\n"):
                content += "\n"  # a text file ends with a newline
            calls.append(("write_file", {"path": path, "content": content}))
            break  # the rest of the message was the content
        elif word == "/edit" and " => " in rest:
            path, _, change = rest.partition(" ")
            old, _, new = change.partition(" => ")
            calls.append(("edit_file", {"path": path, "old": old, "new": new}))
        elif calls:
            continue  # prose between trigger lines is ignored
        else:
            return []  # an ordinary message
    return calls


class OfflineChatModel(BaseChatModel):
    """Deterministic answers, tool calls from the trigger syntax, real streaming and usage."""

    model_name: str = "offline"
    chunk_size: int = 12  # characters per streamed chunk
    chunk_delay: float = 0.0  # seconds between chunks (demos, stop tests)

    @property
    def _llm_type(self) -> str:
        return "mttui-offline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    # -- the deterministic brain ------------------------------------------------
    def _respond(self, messages: list[BaseMessage], tools: list[Any] | None) -> AIMessage:
        tool_names = {t["function"]["name"] for t in tools or [] if "function" in t}
        system = " ".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        convo = [m for m in messages if not isinstance(m, SystemMessage)]
        last = convo[-1] if convo else None
        calls: list[dict[str, Any]] = []
        if COMPRESS_MARKER in system:
            text = snapshot(convo)
        elif isinstance(last, ToolMessage):
            text = summarize_results(convo)
        elif isinstance(last, HumanMessage):
            text_in = str(last.content)
            wanted = parse_triggers(text_in)
            if wanted and (not tool_names or all(n in tool_names for n, _ in wanted)):
                seed = str(last.id or text_in)
                for i, (name, args) in enumerate(wanted):
                    digest = hashlib.sha1(f"{seed}:{i}".encode()).hexdigest()[:16]
                    calls.append({"id": f"call_{digest}", "name": name, "args": args})
                text = ""
            else:
                text = echo_answer(text_in, has_tools=bool(tool_names))
        else:
            text = "Hello! Type a message to start. " + OFFLINE_HELP.splitlines()[0]
        usage = {
            "input_tokens": estimate_tokens(messages),
            "output_tokens": text_tokens(text + json.dumps([c["args"] for c in calls])),
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        return AIMessage(content=text, tool_calls=calls, usage_metadata=usage)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msg = self._respond(messages, kwargs.get("tools"))
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        msg = self._respond(messages, kwargs.get("tools"))
        text = str(msg.content)
        for start in range(0, len(text), self.chunk_size):
            if self.chunk_delay and start:
                time.sleep(self.chunk_delay)
            piece = text[start : start + self.chunk_size]
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        tool_chunks = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(msg.tool_calls)
        ]
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                tool_call_chunks=tool_chunks,  # type: ignore[arg-type]
                usage_metadata=msg.usage_metadata,
                chunk_position="last",
            )
        )
