"""``/usage`` and the status bar: a session's tokens, cost and context left."""

from __future__ import annotations

from dataclasses import dataclass

from mttui.session.models import SessionUsage
from mttui.session.service import SessionService


@dataclass(frozen=True)
class UsageView:
    """What the user is told about a session's usage."""

    usage: SessionUsage
    context_used: int | None  # input tokens of the last request (None: no run yet)
    token_limit: int

    @property
    def context_left_pct(self) -> int | None:
        """Context left as a percentage of ``token_limit`` (from the last request)."""
        return context_left(self.context_used, self.token_limit)

    def describe(self) -> str:
        u = self.usage
        lines = [f"tokens: {u.input_tokens:,} in, {u.output_tokens:,} out "
                 f"({u.input_tokens + u.output_tokens:,} total)"]  # fmt: skip
        lines.append("cost: " + (format_cost(u.cost_usd) if u.cost_usd is not None
                                 else "unknown (no [pricing] for this model)"))
        left = self.context_left_pct
        if left is not None:
            lines.append(f"context left: {left}% of {self.token_limit:,} tokens")
        return "\n".join(lines)


def context_left(used: int | None, limit: int) -> int | None:
    if used is None or limit <= 0:
        return None
    return max(0, min(100, round(100 * (limit - used) / limit)))


def format_cost(cost: float | None) -> str:
    if cost is None:
        return ""
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


def last_input_tokens(service: SessionService, session_id: str) -> int | None:
    """Input tokens of the newest model request of the session (its last 50 messages)."""
    page = service.history(session_id, limit=50)
    for msg in reversed(page.messages):
        usage = msg.usage or {}
        if msg.role == "assistant" and usage.get("input_tokens") is not None:
            return int(usage.get("input_tokens") or 0)
    return None


def usage_view(service: SessionService, session_id: str, token_limit: int) -> UsageView:
    """The session's totals (from the index) and its context left."""
    info = service.get(session_id)
    return UsageView(info.usage, last_input_tokens(service, session_id), token_limit)
