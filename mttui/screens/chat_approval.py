"""Approvals and grants in the chat screen.

An approval is a panel above the prompt (:class:`ApprovalPanel`); the prompt keeps
its text and the focus, so typing never decides anything. ``ctrl+a`` (or ``escape``
in the prompt) focuses the panel; its keys decide. Session grants are counted in the
status bar and listed, and revoked, with ``/permissions``.
"""

from __future__ import annotations

import asyncio

from rich.markup import escape
from textual import work
from textual.actions import SkipAction
from textual.binding import Binding

from mttui.core.handle import ApprovalAnswer
from mttui.graph import events as ev
from mttui.messages import RunEventMessage
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar

from .approval import ApprovalDecision, ApprovalPanel
from .chat_messages import GrantsChanged, Note
from .chat_pending import PendingChat
from .permissions import RULE, PermissionsScreen


class ApprovalChat(PendingChat):
    """The approval side of the chat screen (see the module docstring)."""

    BINDINGS = [
        Binding("ctrl+a", "focus_approval", "Approval ⇄ prompt", id="focus_approval",
                show=False, priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._answer: asyncio.Future[ApprovalDecision | None] | None = None

    @property
    def approval(self) -> ApprovalPanel | None:
        """The approval panel shown now, if any."""
        panels = [p for p in self.query(ApprovalPanel) if not p.done]
        return panels[0] if panels else None

    # -- asking (a run's worker thread waits for the answer) -----------------------
    def ask(self, request: ev.ApprovalRequested) -> ApprovalAnswer | None:
        """Worker thread: show the approval panel and wait for the answer (``None``:
        left pending, e.g. the chat is closing; it is asked again on resume)."""
        diffs = self.chat.diffs(request)
        # (mypy cannot infer call_from_thread's "value or awaitable of it" return type)
        decision: ApprovalDecision | None = self.app.call_from_thread(
            self._ask_on_screen, request, diffs)  # type: ignore[arg-type]
        if decision is None:
            return None
        if decision.rules:
            self.save_rules(decision.rules)
        return ApprovalAnswer(decision.decisions, decision.reason, tuple(decision.remember))

    def save_rules(self, rules: list[str]) -> None:
        """Worker thread: save "always allow in this project" rules (said in the chat)."""
        from mttui.core.permissions import Permissions
        from mttui.session.errors import MttuiError

        perms = Permissions(self.chat.service, self.chat.settings)
        for rule in rules:
            try:
                perms.save(rule)
            except MttuiError as exc:
                self.post_message(Note(escape(f"rule {rule} not saved: {exc}"), "error"))
            else:
                self.post_message(Note(escape(f"saved rule {rule} for this project: matching "
                                              "calls run without asking (revoke with "
                                              "/permissions)")))

    async def _ask_on_screen(self, request: ev.ApprovalRequested,
                             diffs: dict[str, str]) -> ApprovalDecision | None:
        if self.leaving:
            return None
        answer: asyncio.Future[ApprovalDecision | None] = asyncio.get_running_loop(
        ).create_future()
        self._answer = answer
        self.state = "awaiting approval"
        # above the prompt, without the focus: what is typed stays in the prompt
        await self.mount(ApprovalPanel(request, diffs), before=self.query_one("#prompt"))
        return await answer

    def on_approval_panel_decided(self, message: ApprovalPanel.Decided) -> None:
        message.stop()
        message.panel.remove()
        self.query_one("#prompt", PromptArea).focus()
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(message.decision)

    def drop_question(self) -> None:
        """Leave the approval pending (asked again on resume) so the worker can end."""
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(None)
        for panel in self.query(ApprovalPanel):
            panel.remove()

    # -- keys --------------------------------------------------------------------------
    def action_focus_approval(self) -> None:
        """``ctrl+a``: between the prompt and the approval (elsewhere: the prompt's key)."""
        panel = self.approval
        if panel is None:
            raise SkipAction()
        if panel.has_focus_within:
            self.query_one("#prompt", PromptArea).focus()
        else:
            self.focus_approval()

    def focus_approval(self) -> bool:
        """Focus the approval panel (its reason field while one is typed); ``False``
        when no approval is shown."""
        panel = self.approval
        if panel is None:
            return False
        panel.take_focus()
        return True

    # -- grants -------------------------------------------------------------------------
    def post_grants(self, show: bool = False) -> None:
        """Worker thread: read the session's grants and post them."""
        rules = []
        if show:
            from mttui.core.permissions import Permissions
            from mttui.session.errors import MttuiError

            try:
                perms = Permissions(self.chat.service, self.chat.settings)
                rules = perms.rules()
                for problem in perms.problems():  # a broken rule file: its allow rules
                    self.post_message(Note(escape(problem), "warning"))  # are ignored
            except MttuiError as exc:  # an unreadable rule file: said, grants still shown
                self.post_message(Note(escape(str(exc)), "error"))
        self.post_message(GrantsChanged(self.chat.grants(), show, rules))

    @work(thread=True, group="grants", exit_on_error=False, name="grants")
    def refresh_grants(self, show: bool = False) -> None:
        self.post_grants(show)

    def on_grants_changed(self, message: GrantsChanged) -> None:
        self.query_one(StatusBar).grants = len(message.grants)
        if message.show:
            self.app.push_screen(PermissionsScreen(message.grants, message.rules),
                                 self._revoke_chosen)

    def _revoke_chosen(self, tool: str | None) -> None:
        if tool is not None and tool.startswith(RULE):
            self._revoke_rule(tool[len(RULE):])
        elif tool is not None:
            self._revoke(tool)

    @work(thread=True, group="grants", exit_on_error=False, name="revoke a rule")
    def _revoke_rule(self, rule: str) -> None:
        from mttui.core.permissions import Permissions
        from mttui.session.errors import MttuiError

        try:
            Permissions(self.chat.service, self.chat.settings).revoke(rule)
        except MttuiError as exc:
            self.post_message(Note(escape(str(exc)), "error"))
        else:
            self.post_message(Note(escape(f"rule {rule} removed: matching calls ask again")))

    @work(thread=True, group="grants", exit_on_error=False, name="revoke a grant")
    def _revoke(self, tool: str) -> None:
        if self.chat.revoke_grant(tool):
            self.post_message(Note(f"{tool} asks again from now on (grant revoked)"))
        elif self.chat.read_only:
            self.post_message(Note(self.chat.read_only, "error"))
        self.post_grants()

    def on_run_event_message(self, message: RunEventMessage) -> None:
        super().on_run_event_message(message)
        if isinstance(message.event, ev.ApprovalDecided) and message.event.remember:
            self.refresh_grants()
