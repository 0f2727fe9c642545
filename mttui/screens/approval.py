"""The approval modal: every tool call of one request, decided one by one."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from mttui.graph.events import ApprovalRequested
from mttui.widgets.text import full_args, literal, short_args

RISK_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


@dataclass(frozen=True)
class ApprovalDecision:
    """The user's answer to one approval request (what the runner needs)."""

    request_id: str
    decisions: dict[str, str]  # call_id -> approve | deny
    reason: str | None = None
    remember: list[str] = field(default_factory=list)  # tools approved for the session

    @property
    def approved_all(self) -> bool:
        return all(v == "approve" for v in self.decisions.values())


def diff_text(diff: str) -> Text:
    out = Text()
    for line in literal(diff).splitlines():
        style = ""
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith(("+++", "---")):
            style = "bold"
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Returns an :class:`ApprovalDecision` once every call has a decision."""

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; background: $background 70%; }
    ApprovalScreen > Vertical {
        width: 94%; max-width: 116; height: auto; max-height: 90%; padding: 0 1;
        background: $panel; border: round $warning; border-title-color: $warning;
        border-title-style: bold; border-subtitle-color: $text-muted;
    }
    ApprovalScreen #calls { height: auto; margin: 1 0; }
    ApprovalScreen #detail { height: auto; max-height: 20; background: $surface;
                             padding: 0 1; margin-bottom: 1; }
    ApprovalScreen #reason { display: none; margin-bottom: 1; }
    ApprovalScreen #reason.asking { display: block; }
    """
    BINDINGS = [
        Binding("y", "decide('approve')", "Approve", id="approval.approve"),
        Binding("n", "decide('deny')", "Deny", id="approval.deny"),
        Binding("a", "decide('always')", "Approve tool for session", id="approval.always"),
        Binding("down,j", "move(1)", "Next call", id="approval.next", show=False),
        Binding("up,k", "move(-1)", "Previous call", id="approval.previous", show=False),
    ]

    current: reactive[int] = reactive(0, init=False)  # the call shown in detail

    def __init__(self, request: ApprovalRequested, diffs: dict[str, str] | None = None) -> None:
        super().__init__()
        self.request = request
        self.diffs = diffs or {}
        self.calls = list(request.tool_calls)
        self.decisions: dict[str, str] = {}
        self.remember: list[str] = []
        self.reason: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            n = len(self.calls)
            box.border_title = "Approval needed"
            if self.request.asked_again:
                box.border_subtitle = "asked again after resume"
            yield Static(self._intro(n), id="intro")
            yield Static(id="calls")
            with VerticalScroll(id="detail"):
                yield Static(id="detail-body")
            yield Input(placeholder="reason for denying (optional) · enter to continue",
                        id="reason")
        yield Footer()

    def _intro(self, n: int) -> Text:
        text = Text()
        if self.request.asked_again:
            text.append("Asked again after resume: ", style="bold yellow")
            text.append("this request was pending when the session stopped.\n")
        text.append(f"The assistant wants to run {n} tool call{'s' if n != 1 else ''}.")
        if n > 1:
            text.append(" Decide each one (↑↓ to move).", style="dim")
        return text

    def on_mount(self) -> None:
        self._refresh()

    def watch_current(self) -> None:
        self._refresh()

    # -- drawing --------------------------------------------------------------
    def _refresh(self) -> None:
        rows: list[RenderableType] = []
        for i, call in enumerate(self.calls):
            cid = str(call.get("call_id", ""))
            tool = str(call.get("tool_name", ""))
            risk = str(call.get("risk_level", "medium"))
            line = Text("▶ " if i == self.current else "  ", style="bold")
            line.append(f"{i + 1}  ", style="dim")
            line.append(literal(tool), style="bold")
            line.append(f"  {risk} risk", style=RISK_STYLE.get(risk, "yellow"))
            line.append("   " + short_args(tool, call.get("arguments", {}), 50), style="dim")
            decision = self.decisions.get(cid)
            if decision == "approve":
                line.append("   ✓ approve", style="green")
            elif decision == "deny":
                line.append("   ✗ deny", style="red")
            rows.append(line)
        self.query_one("#calls", Static).update(Group(*rows))
        self.query_one("#detail-body", Static).update(self._detail())

    def _detail(self) -> RenderableType:
        call = self.calls[self.current] if self.calls else {}
        cid = str(call.get("call_id", ""))
        tool = str(call.get("tool_name", ""))
        args = call.get("arguments", {})
        parts: list[RenderableType] = []
        if tool == "shell" and isinstance(args, dict):
            parts.append(Text("command", style="dim"))
            parts.append(Text("$ " + literal(str(args.get("command", ""))), style="bold"))
            if args.get("timeout"):
                parts.append(Text(f"timeout {args['timeout']} s", style="dim"))
        elif cid in self.diffs:
            parts.append(Text("diff preview", style="dim"))
            parts.append(diff_text(self.diffs[cid]))
        else:
            parts.append(Text("arguments", style="dim"))
            parts.append(Text(literal(full_args(args))))
        return Group(*parts)

    # -- deciding -------------------------------------------------------------
    def action_move(self, step: int) -> None:
        if self.calls:
            self.current = max(0, min(len(self.calls) - 1, self.current + step))

    def action_decide(self, what: str) -> None:
        if not self.calls or self.query_one("#reason", Input).has_class("asking"):
            return
        call = self.calls[self.current]
        cid = str(call.get("call_id", ""))
        if what == "always":
            tool = str(call.get("tool_name", ""))
            if tool not in self.remember:
                self.remember.append(tool)
            for other in self.calls:  # the same tool, elsewhere in this request, too
                if other.get("tool_name") == tool:
                    self.decisions.setdefault(str(other.get("call_id", "")), "approve")
            self.decisions[cid] = "approve"
        else:
            self.decisions[cid] = what
        self._refresh()
        if what == "deny":
            reason = self.query_one("#reason", Input)
            reason.add_class("asking")
            reason.focus()
            return
        self._advance()

    @on(Input.Submitted, "#reason")
    def _reason(self, event: Input.Submitted) -> None:
        event.stop()
        text = " ".join(event.value.split())
        if text:
            self.reason = f"{self.reason}; {text}" if self.reason else text
        event.input.value = ""
        event.input.remove_class("asking")
        self.set_focus(None)
        self._advance()

    def _advance(self) -> None:
        open_ = [i for i, c in enumerate(self.calls)
                 if str(c.get("call_id", "")) not in self.decisions]
        if not open_:
            self.dismiss(ApprovalDecision(self.request.request_id, dict(self.decisions),
                                          self.reason, list(self.remember)))
            return
        later = [i for i in open_ if i > self.current]
        self.current = later[0] if later else open_[0]
