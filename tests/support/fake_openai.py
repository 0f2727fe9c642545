"""A scripted OpenAI-compatible server for tests: ``POST /v1/chat/completions``.

Each request takes the next scripted reply (``text``, ``tools``, ``error``,
``slow``, ``hang``); when the script is empty it answers ``"ok"``. Streaming
follows the chunk format of stack-notes.md, with a usage chunk when the request
asks for it (``stream_options.include_usage``). Every request body is kept in
``requests`` so tests can assert on what the model saw. With ``strict_names`` set, a
request naming a function against OpenAI's pattern (``^[a-zA-Z0-9_-]{1,64}$``, in
``tools`` or in a message's ``tool_calls``) gets OpenAI's HTTP 400 and takes no reply
from the script (kept in ``rejected``). ``closed_port_url``: a URL
where nothing listens (connection refused). Fixtures ``fake_openai`` and
``closed_port`` are in conftest.
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def text(
    content: str, *, pieces: int = 4, usage: tuple[int, int] | None = (11, 7)
) -> dict[str, Any]:
    return {"kind": "text", "content": content, "pieces": pieces, "usage": usage}


def tools(
    calls: list[tuple[str, str, dict[str, Any]]],
    *,
    content: str = "",
    usage: tuple[int, int] | None = (13, 9),
) -> dict[str, Any]:
    """Tool calls ``(call_id, name, args)``; arguments are streamed in fragments."""
    return {"kind": "tools", "calls": calls, "content": content, "usage": usage}


def error(status: int = 500, message: str = "scripted failure") -> dict[str, Any]:
    return {"kind": "error", "status": status, "message": message}


def slow(content: str, *, delay: float = 0.2, pieces: int = 50) -> dict[str, Any]:
    """Streams ``content`` in ``pieces`` chunks, ``delay`` seconds apart."""
    return {"kind": "text", "content": content, "pieces": pieces, "delay": delay, "usage": None}


def hang(seconds: float) -> dict[str, Any]:
    """Sends nothing for ``seconds`` (a client timeout fires first)."""
    return {"kind": "hang", "seconds": seconds}


def _split(s: str, n: int) -> list[str]:
    if not s:
        return []
    size = max(1, -(-len(s) // max(n, 1)))
    return [s[i : i + size] for i in range(0, len(s), size)]


class FakeOpenAI:
    """The server; ``url`` is the base URL to give ``ChatOpenAI`` (ends in ``/v1``)."""

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()  # guards script and requests (the server is threaded)
        self.disconnects = 0  # "hang" replies whose client closed the connection early
        self.strict_names = False  # refuse invalid function names as OpenAI does
        self.rejected: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def add(self, *replies: dict[str, Any]) -> FakeOpenAI:
        with self.lock:
            self.script.extend(replies)
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def hang(self, conn: socket.socket, seconds: float) -> bool:
        """Hold a reply for ``seconds``; ``True`` as soon as the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([conn], [], [], min(left, 0.05))
            if readable and not conn.recv(1, socket.MSG_PEEK):
                with self.lock:
                    self.disconnects += 1
                return True
        return False

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """Record the request and take the next scripted reply (a subclass may route)."""
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self.script.pop(0) if self.script else text("ok")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                bad = bad_names(body) if fake.strict_names else []
                if bad:
                    with fake.lock:
                        fake.rejected.append(body)
                    self._json(400, {"error": {
                        "message": f"Invalid '{bad[0]}': string does not match pattern. "
                                   "Expected a string that matches the pattern "
                                   "'^[a-zA-Z0-9_-]{1,64}$'.",
                        "type": "invalid_request_error", "code": "invalid_value"}})
                    return
                reply = fake.next_reply(body, {k.lower(): v for k, v in self.headers.items()})
                # the client may go away mid-reply (stop, timeout)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._reply(body, reply)

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _reply(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                if reply["kind"] == "error":
                    err = {"message": reply["message"], "type": "server_error", "code": None}
                    self._json(reply["status"], {"error": err})
                    return
                if reply["kind"] == "hang":
                    if fake.hang(self.connection, reply["seconds"]):
                        return  # the client closed the connection while we held it
                    self._json(200, {"error": {"message": "too late"}})
                    return
                if not body.get("stream"):
                    self._json(200, _completion(body, reply))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                want_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                for chunk in _chunks(body, reply, want_usage):
                    if reply.get("delay"):
                        time.sleep(reply["delay"])
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def bad_names(body: dict[str, Any]) -> list[str]:
    """Where ``body`` names a function against OpenAI's pattern (``tools[3].function.name``)."""
    out = [f"tools[{i}].function.name" for i, tool in enumerate(body.get("tools") or [])
           if not NAME.fullmatch(str((tool.get("function") or {}).get("name", "")))]
    for i, message in enumerate(body.get("messages") or []):
        for j, call in enumerate(message.get("tool_calls") or []):
            if not NAME.fullmatch(str((call.get("function") or {}).get("name", ""))):
                out.append(f"messages[{i}].tool_calls[{j}].function.name")
    return out


def _base(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
    }


def _chunk(
    body: dict[str, Any], delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {**_base(body), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _chunks(
    body: dict[str, Any], reply: dict[str, Any], want_usage: bool
) -> Iterator[dict[str, Any]]:
    yield _chunk(body, {"role": "assistant", "content": ""})
    for piece in _split(reply.get("content", ""), reply.get("pieces", 4)):
        yield _chunk(body, {"content": piece})
    finish = "stop"
    if reply["kind"] == "tools":
        finish = "tool_calls"
        for index, (call_id, name, args) in enumerate(reply["calls"]):
            first = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            yield _chunk(body, {"tool_calls": [first]})
            for frag in _split(json.dumps(args), 3):
                yield _chunk(
                    body, {"tool_calls": [{"index": index, "function": {"arguments": frag}}]}
                )
    yield _chunk(body, {}, finish)
    if want_usage and reply.get("usage"):
        prompt, completion = reply["usage"]
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        yield {**_base(body), "choices": [], "usage": usage}


def _completion(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
    if reply["kind"] == "tools":
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in reply["calls"]
        ]
    prompt, completion = reply.get("usage") or (0, 0)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
