"""An app that hosts the approval panel alone, and sample calls to ask about."""

from __future__ import annotations

from textual.app import App, ComposeResult

from mttui.graph.events import ApprovalRequested
from mttui.screens.approval import ApprovalDecision, ApprovalPanel

CALLS = [
    {"call_id": "call_1", "tool_name": "shell", "arguments": {"command": "rm -rf build/"},
     "risk_level": "high"},
    {"call_id": "call_2", "tool_name": "write_file",
     "arguments": {"path": "a.txt", "content": "x"}, "risk_level": "medium"},
    {"call_id": "call_3", "tool_name": "shell", "arguments": {"command": "make"},
     "risk_level": "high"},
]


class Host(App[None]):
    def __init__(self, request: ApprovalRequested, diffs: dict[str, str] | None = None) -> None:
        super().__init__()
        self.request = request
        self.diffs = diffs
        self.result: ApprovalDecision | None = None

    def compose(self) -> ComposeResult:
        yield ApprovalPanel(self.request, self.diffs)

    def on_mount(self) -> None:
        self.query_one(ApprovalPanel).focus()

    def on_approval_panel_decided(self, message: ApprovalPanel.Decided) -> None:
        self.result = message.decision


def request(calls: list[dict], *, again: bool = False) -> ApprovalRequested:
    return ApprovalRequested("req_1", "run_1", calls, asked_again=again)
