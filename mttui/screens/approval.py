"""The approval panel: every tool call of one request, decided one by one.

The panel sits above the prompt and never takes the focus by itself: whatever is
typed goes to the prompt (``enter`` there queues it). Decisions need the panel to be
focused first (``ctrl+a``, or ``escape`` from the prompt), and then number keys a
typed sentence reaches only after that deliberate step; approving a tool for the rest
of the session asks once more, naming what it grants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static

from mttui.graph.events import ApprovalRequested
from mttui.widgets.text import full_args, literal, short_args
from mttui.widgets.typed_input import TypedInput

RISK_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


@dataclass(frozen=True)
class ApprovalDecision:
    """The user's answer to one approval request (what the runner needs)."""

    request_id: str
    decisions: dict[str, str]  # call_id -> approve | deny
    reason: str | None = None
    remember: list[str] = field(default_factory=list)  # tools approved for the session
    rules: list[str] = field(default_factory=list)  # "always allow in this project" rules

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


class ApprovalPanel(Vertical, can_focus=True):
    """Posts :class:`ApprovalPanel.Decided` once every call has a decision."""

    DEFAULT_CSS = """
    ApprovalPanel {
        height: auto; max-height: 60%; padding: 0 1; background: $panel;
        border: round $warning 50%; border-title-color: $warning;
        border-title-style: bold; border-subtitle-color: $text-muted;
    }
    ApprovalPanel:focus-within { border: heavy $warning; }
    ApprovalPanel #calls { height: auto; margin: 1 0 0 0; }
    ApprovalPanel #detail { height: auto; max-height: 12; background: $surface;
                            padding: 0 1; margin: 1 0 0 0; }
    ApprovalPanel #reason { display: none; }
    ApprovalPanel #reason.asking { display: block; }
    ApprovalPanel #keys { height: auto; color: $text-muted; }
    ApprovalPanel #keys.confirming { color: $warning; text-style: bold; }
    """
    BINDINGS = [
        Binding("ctrl+a", "app.focus('prompt')", "Approval ⇄ prompt",
                id="approval.focus", show=False),
        Binding("1", "decide('approve')", "Approve", id="approval.approve"),
        Binding("2", "decide('deny')", "Deny (with a reason)", id="approval.deny"),
        Binding("3", "decide('always')", "Approve tool for session…", id="approval.always"),
        Binding("4", "decide('project')", "Always allow in this project…",
                id="approval.project"),
        Binding("enter", "confirm", "Confirm", id="approval.confirm", show=False),
        Binding("escape", "escape", "Deny", id="approval.escape"),
        Binding("down,j", "move(1)", "Next call", id="approval.next", show=False),
        Binding("up,k", "move(-1)", "Previous call", id="approval.previous", show=False),
    ]

    class Decided(Message):
        def __init__(self, panel: ApprovalPanel, decision: ApprovalDecision) -> None:
            super().__init__()
            self.panel = panel
            self.decision = decision

    current: reactive[int] = reactive(0, init=False)  # the call shown in detail

    def __init__(self, request: ApprovalRequested, diffs: dict[str, str] | None = None,
                 *, id: str | None = "approval") -> None:
        super().__init__(id=id)
        self.request = request
        self.diffs = diffs or {}
        self.calls = list(request.tool_calls)
        self.decisions: dict[str, str] = {}
        self.remember: list[str] = []
        self.reason: str | None = None
        self.confirming: str | None = None  # the tool a session grant waits to confirm for
        self.proposing: str | None = None  # the project rule shown, waiting to be confirmed
        self.rules: list[str] = []
        self.done = False

    def compose(self) -> ComposeResult:
        n = len(self.calls)
        self.border_title = "Approval needed"
        if self.request.asked_again:
            self.border_subtitle = "asked again after resume"
        yield Static(self._intro(n), id="intro")
        yield Static(id="calls")
        with VerticalScroll(id="detail"):
            yield Static(id="detail-body")
        yield TypedInput(placeholder="reason for denying (optional) · enter to continue",
                    id="reason")
        yield Static(id="keys")

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

    def on_key(self, event: events.Key) -> None:
        """While a session grant waits for its confirmation, any other key than the
        confirming ones backs out of it (``3 files`` then enter grants nothing)."""
        if self.confirming is not None and event.key not in ("enter", "3", "escape"):
            self.confirming = None
            self._keys()
        if self.proposing is not None and event.key not in ("enter", "4", "escape"):
            self.proposing = None
            self._keys()

    def on_focus(self) -> None:
        self._keys()

    def on_blur(self) -> None:
        self._keys()

    def on_descendant_focus(self) -> None:
        self._keys()

    def on_descendant_blur(self) -> None:
        self._keys()

    # -- drawing --------------------------------------------------------------
    def _keys(self) -> None:
        keys = self.query_one("#keys", Static)
        keys.set_class(self.confirming is not None or self.proposing is not None, "confirming")
        if self.proposing is not None:
            keys.update(Text(
                f"Always allow in this project: save the rule {literal(self.proposing)} — "
                "calls it matches run without asking from now on (revoke with /permissions "
                "or mttui permissions revoke).  enter or 4 saves · any other key goes back"))
        elif self.confirming is not None:
            keys.update(Text(
                f"Approve every {literal(self.confirming)} call for the rest of this session, "
                "without asking (also after a restart, until revoked with /permissions)?  "
                "enter or 3 confirms · any other key goes back"))
        elif self.query_one("#reason", Input).has_class("asking"):
            keys.update("enter continues · escape denies the remaining calls")
        elif self.has_focus:
            keys.update("1 approve · 2 deny · 3 approve this tool for the session… · "
                        "4 always allow in this project… · escape deny · tab back to the prompt")
        else:
            keys.update("ctrl+a (or escape) to decide · what you type goes to the prompt "
                        "(enter queues it)")

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
        self._keys()

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

    def take_focus(self) -> None:
        """Focus the panel (its reason field while a reason is being typed)."""
        if self._asking():
            self.query_one("#reason", Input).focus()
        else:
            self.focus()

    # -- deciding -------------------------------------------------------------
    def _asking(self) -> bool:
        return self.query_one("#reason", Input).has_class("asking")

    def action_move(self, step: int) -> None:
        if self.calls and self.confirming is None and self.proposing is None:
            self.current = max(0, min(len(self.calls) - 1, self.current + step))

    def action_decide(self, what: str) -> None:
        if not self.calls or self.done or self._asking():
            return
        call = self.calls[self.current]
        cid = str(call.get("call_id", ""))
        if self.confirming is not None:
            if what == "always":  # 3 again confirms
                self.action_confirm()
            return
        if self.proposing is not None:
            if what == "project":  # 4 again saves
                self.action_confirm()
            return
        if what == "project":  # shows the rule it would save, then asks once more
            from mttui.core.permissions import Permissions

            self.proposing = Permissions.propose(str(call.get("tool_name", "")),
                                                 call.get("arguments", {}))
            self._keys()
            return
        if what == "always":  # asks once more, naming what it grants
            self.confirming = str(call.get("tool_name", ""))
            self._keys()
            return
        self.decisions[cid] = what
        self._refresh()
        if what == "deny":
            reason = self.query_one("#reason", Input)
            reason.add_class("asking")
            reason.focus()
            self._keys()
            return
        self._advance()

    def action_confirm(self) -> None:
        """``enter``: confirms a session grant or a project rule (nothing else)."""
        if self.proposing is not None and not self.done:
            self._save_rule(self.proposing)
            return
        tool = self.confirming
        if tool is None or self.done:
            return
        self.confirming = None
        if tool not in self.remember:
            self.remember.append(tool)
        for other in self.calls:  # the same tool, elsewhere in this request, too
            if other.get("tool_name") == tool:
                self.decisions.setdefault(str(other.get("call_id", "")), "approve")
        self.decisions[str(self.calls[self.current].get("call_id", ""))] = "approve"
        self._refresh()
        self._advance()

    def action_escape(self) -> None:
        """``escape``: backs out of a grant's confirmation; otherwise denies every call
        not decided yet (a reason being typed is kept) and finishes."""
        if self.done:
            return
        if self.confirming is not None or self.proposing is not None:
            self.confirming = self.proposing = None
            self._keys()
            return
        reason = self.query_one("#reason", Input)
        if self._asking():
            self._take_reason(reason)
        for call in self.calls:
            self.decisions.setdefault(str(call.get("call_id", "")), "deny")
        self._refresh()
        self._advance()

    def _take_reason(self, field_: Input) -> None:
        text = " ".join(field_.value.split())
        if text:
            self.reason = f"{self.reason}; {text}" if self.reason else text
        field_.value = ""
        field_.remove_class("asking")
        self.focus()

    @on(Input.Submitted, "#reason")
    def _reason(self, event: Input.Submitted) -> None:
        event.stop()
        self._take_reason(event.input)
        self._advance()

    def _advance(self) -> None:
        open_ = [i for i, c in enumerate(self.calls)
                 if str(c.get("call_id", "")) not in self.decisions]
        if not open_:
            self.done = True
            self.post_message(self.Decided(self, ApprovalDecision(
                self.request.request_id, dict(self.decisions), self.reason,
                list(self.remember), list(self.rules))))
            return
        later = [i for i in open_ if i > self.current]
        self.current = later[0] if later else open_[0]
        self._keys()



    def _save_rule(self, rule: str) -> None:
        """The proposed rule is confirmed: this call, and every other call of the
        request the rule covers, is approved; the rule is saved by the chat."""
        from mttui.core.permissions import rule_covers

        self.proposing = None
        if rule not in self.rules:
            self.rules.append(rule)
        for other in self.calls:
            if rule_covers(rule, str(other.get("tool_name", "")), other.get("arguments", {})):
                self.decisions.setdefault(str(other.get("call_id", "")), "approve")
        self.decisions[str(self.calls[self.current].get("call_id", ""))] = "approve"
        self._refresh()
        self._advance()
