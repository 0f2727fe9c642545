"""Compaction from the chat: ``ctrl+k`` (asks first) and ``/compact [instructions]``."""

from __future__ import annotations

from textual import work

from mttui.core.compact import compact_events
from mttui.core.drive import drive
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar

from .chat_approval import ApprovalChat
from .chat_messages import ReadOnly, StatusNote
from .dialogs import ConfirmScreen


class CompactChat(ApprovalChat):
    """The compaction side of the chat screen."""

    async def action_compact(self) -> None:
        """``ctrl+k``: in a prompt with text it deletes to the end of the line (as in
        every editor); otherwise it asks before compressing the history."""
        prompt = self.query_one(PromptArea)
        if prompt.has_focus and prompt.text:
            await prompt.action_delete_to_end_of_line_or_delete_line()
            return
        if not self.can_compact():
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.start_compaction()

        self.app.push_screen(ConfirmScreen(
            "Compact the history", "Summarise older messages for the model now? The "
            "transcript stays as it is.", yes="Compact"), answered)

    def can_compact(self) -> bool:
        if self.state != "idle" or self.chat.info is None:
            self.notify("compaction needs an idle session with messages", severity="warning")
            return False
        return True

    def start_compaction(self, instructions: str | None = None) -> bool:
        """``/compact [instructions]`` (or a confirmed ``ctrl+k``): compress now."""
        if not self.can_compact():
            return False
        self.query_one(StatusBar).note = "compacting…"
        self.state = "running"
        self.compact_in_worker(instructions)
        return True

    @work(thread=True, group="run", exit_on_error=False, name="compaction")
    def compact_in_worker(self, instructions: str | None = None) -> None:
        handle = self.chat.open_for_writing()
        if handle is None:
            self.post_message(ReadOnly(self.chat.read_only or ""))
            return
        try:
            pending = None if handle.resumed else self.resume_now()
            if pending is not None:  # ask what was pending first; compact afterwards
                drive(handle, None, emit=self.emit, ask=self.ask, pending=pending)
                return
            drive(handle, compact_events(handle, instructions), emit=self.emit, ask=self.ask)
        finally:
            self.post_message(StatusNote(""))
