"""The token usage of one run, summed from its model calls, for ``run_end.usage``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .events import RunEvent, UsageUpdated


@dataclass
class RunUsage:
    """Input and output tokens of the model calls of one run (essentials.md "Usage")."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False  # some call's usage was estimated locally (none reported)

    def add(self, event: RunEvent) -> None:
        if isinstance(event, UsageUpdated):
            self.input_tokens += int(event.input_tokens)
            self.output_tokens += int(event.output_tokens)
            self.estimated = self.estimated or event.estimated

    def record(self, price: tuple[float, float] | None) -> dict[str, Any]:
        """``{input_tokens, output_tokens, cost_usd}``; ``cost_usd`` null without a price."""
        cost = None
        if price is not None:
            cost = round((self.input_tokens * price[0] + self.output_tokens * price[1]) / 1e6, 8)
        out: dict[str, Any] = {"input_tokens": self.input_tokens,
                               "output_tokens": self.output_tokens, "cost_usd": cost}  # fmt: skip
        if self.estimated:
            out["estimated"] = True
        return out
