"""Where history compression cuts, and how the older part is split for the summary.

A cut is made only where no tool exchange is split: before a user message or —
inside the current turn, so that a long tool loop can be compressed mid-run —
before an assistant message whose earlier tool calls all have their results
before it. The kept part therefore never starts with a tool message. The latest
user request is always kept verbatim: when the cut falls inside the current
turn it is kept in front of the kept messages (it is "lifted").

No LangChain import here: messages are duck-typed (``type``, ``id``,
``tool_calls``, ``tool_call_id``, ``content``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..messages import STEER_MARK
from ..tokens import CHARS_PER_TOKEN, estimate_tokens, message_tokens

SUMMARY_PREFIX = "summary-"


def is_summary(message: Any) -> bool:
    ident = message.id
    return isinstance(ident, str) and ident.startswith(SUMMARY_PREFIX)


def is_request(message: Any) -> bool:
    """A user message (not a compression summary)."""
    return message.type == "human" and not is_summary(message)


@dataclass(frozen=True)
class Cut:
    older: list[Any]  # what the summary replaces (an earlier summary included)
    kept: list[Any]  # [the lifted request?, messages after the cut…]
    lifted: int = -1  # the index in ``older`` of the lifted request (-1: none)

    @cached_property
    def removed(self) -> int:
        """Messages that leave the view (no summary, not the lifted request): counted
        only when a compression is applied, which reads the older part anyway."""
        return sum(1 for i, m in enumerate(self.older) if i != self.lifted and not is_summary(m))


def safe_points(messages: list[Any]) -> list[int]:
    """Indices ``i`` (``1 ≤ i ≤ len``) where ``messages[i:]`` may start: no tool call
    made before ``i`` has its result at or after ``i``, ``messages[i]`` is neither a
    tool result nor a summary, and it does not split a batch of Steers (the model was
    sent them as one message)."""
    points: list[int] = []
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        kind = m.type
        if (i > 0 and not open_calls and kind != "tool" and not is_summary(m)
                and not (_steer(m) and _steer(messages[i - 1]))):
            points.append(i)
        if kind == "ai":
            open_calls.update(str(c["id"]) for c in m.tool_calls or [])
        elif kind == "tool":
            open_calls.discard(str(m.tool_call_id))
    if messages and not open_calls:
        points.append(len(messages))
    return points


def _steer(message: Any) -> bool:
    return bool(getattr(message, "additional_kwargs", {}).get(STEER_MARK))


def choose_cut(messages: list[Any], keep_budget: int) -> Cut | None:
    """The largest recent part worth at most ``keep_budget`` tokens that can be kept,
    or ``None`` when nothing older than what must be kept exists.

    Before the latest request only whole user turns are cut; inside the current,
    unfinished turn any safe point is. When nothing fits, the latest request is kept
    with as little as possible after it.

    ``messages`` pair up (:func:`~mttui.graph.messages.assert_paired`, each result
    after its call), as both callers check first. The choice walks back from the end
    and stops once the kept part is over the budget, so it reads the kept part and
    not the whole history (a long session's compression is chosen in the time its
    tail takes); the older part is only sliced.
    """
    n = len(messages)
    last = next((i for i in range(n - 1, -1, -1) if is_request(messages[i])), None)
    if last is None:
        return None
    tail = messages[-1]
    # Inside the current turn only while it is unfinished (a long tool loop); a cut
    # right after the request keeps what a cut before it keeps: not a candidate.
    finished = tail.type == "ai" and not getattr(tail, "tool_calls", None)
    lifted = message_tokens(messages[last])
    suffix = 0  # tokens of messages[p:]
    answered_later: set[str] = set()  # results at or after p whose call is before p
    largest: int | None = None  # the latest candidate: the cut when nothing fits
    cut: int | None = None  # the earliest candidate that fits so far
    for p in range(n, 0, -1):
        safe = True  # p == n: every call has its result (paired)
        if p < n:
            m = messages[p]
            suffix += message_tokens(m)
            kind = m.type
            if kind == "ai":
                answered_later.difference_update(str(c["id"]) for c in m.tool_calls or [])
            elif kind == "tool":
                answered_later.add(str(m.tool_call_id))
            safe = (not answered_later and kind != "tool" and not is_summary(m)
                    and not (_steer(m) and _steer(messages[p - 1])))  # one batch of Steers
        # the kept part only grows going back: once over the budget, nothing earlier fits
        kept = suffix + (lifted if p > last else 0)
        if kept > keep_budget and largest is not None:
            break
        if not safe:
            continue
        if (p <= last and is_request(messages[p])) or (p > last + 1 and not finished):
            largest = p if largest is None else largest
            if kept <= keep_budget:
                cut = p
    if cut is None:
        cut = largest
    if cut is None:
        return None
    older = messages[:cut]
    # something leaves the view (stops at the first such message, near the start)
    if not any(i != last and not is_summary(m) for i, m in enumerate(older)):
        return None
    kept_part = ([messages[last]] if cut > last else []) + messages[cut:]
    return Cut(older, kept_part, last if last < cut else -1)


def clip_text(text: str, max_tokens: int) -> str:
    """``text`` cut to about ``max_tokens`` (head and tail kept, the middle marked)."""
    limit = max(max_tokens, 16) * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters omitted …]\n{text[-half:]}"


def _clip_value(value: Any, max_tokens: int) -> Any:
    if isinstance(value, str):
        return clip_text(value, max_tokens)
    if isinstance(value, dict):
        return {k: _clip_value(v, max_tokens) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_value(v, max_tokens) for v in value]
    return value


def clip_message(message: Any, max_tokens: int) -> Any:
    """A copy of ``message`` whose text and call arguments fit in ``max_tokens`` (the
    message itself when it already fits); only for the summary request."""
    if message_tokens(message) <= max_tokens:
        return message
    update: dict[str, Any] = {}
    if isinstance(message.content, str):
        update["content"] = clip_text(message.content, max_tokens)
    calls = getattr(message, "tool_calls", None)
    if calls:
        share = max_tokens // (2 * len(calls))
        update["tool_calls"] = [{**c, "args": _clip_value(c.get("args"), share)} for c in calls]
    return message.model_copy(update=update)


def chunks(older: list[Any], max_tokens: int) -> list[list[Any]]:
    """``older`` (clipped) in consecutive pieces of at most ``max_tokens`` each, split
    only at safe points so a tool call and its results are always sent together."""
    clipped = [clip_message(m, max_tokens // 2) for m in older]
    bounds = [0, *[p for p in safe_points(clipped) if p < len(clipped)], len(clipped)]
    out: list[list[Any]] = [[]]
    size = 0
    for start, end in zip(bounds, bounds[1:], strict=False):
        unit = clipped[start:end]
        cost = estimate_tokens(unit)
        if out[-1] and size + cost > max_tokens:
            out.append([])
            size = 0
        out[-1].extend(unit)
        size += cost
    return [c for c in out if c]
