"""The chat request's messages and tools sent as they are, not walked by the client.

The ``openai`` client "transforms" every request's parameters against their
TypedDicts before sending them: a recursive walk that tries each variant of every
union (a message is one of six, its content one of several…). For chat
completions the walk changes nothing (the parameter types declare no aliases or
formats; a test keeps checking that), yet it costs about 0.3 ms per message and
more per tool schema: 5–10 ms for a 20-message tool loop, tens of milliseconds per
request in a long session, paid again on every step. The client merges
``extra_body`` into the JSON body untouched, so the messages and tools go there
(the ``messages`` argument the client insists on is left empty, then replaced).
A user's own ``extra_body`` keys still win, as before.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

PASSED = ("messages", "tools")  # the large parameters; the rest stays with the client


def pass_through(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` (LangChain's ``create(**payload)`` arguments) with :data:`PASSED` in
    ``extra_body``; a payload without ``messages`` (another API) is left alone."""
    if not isinstance(payload.get("messages"), list):
        return payload
    moved = {k: payload.pop(k) for k in PASSED if k in payload}
    payload["extra_body"] = {**moved, **(payload.get("extra_body") or {})}
    payload["messages"] = []  # required by the client's signature; the body's wins
    return payload


@lru_cache(maxsize=1)
def fast_chat_openai() -> type[ChatOpenAI]:
    """``ChatOpenAI`` whose chat requests skip the client's parameter walk."""
    from langchain_openai import ChatOpenAI

    class FastChatOpenAI(ChatOpenAI):
        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None,
                                 **kwargs: Any) -> dict[str, Any]:
            return pass_through(super()._get_request_payload(input_, stop=stop, **kwargs))

    return FastChatOpenAI
