"""Opening a session writes nothing: the chat shows what the resume will do (its
warnings, an approval it waits for) and applies it when the user first acts.

Sending, answering that approval, resuming the queue or compacting applies the
resume (``resume_now``) right before what the user asked for.
"""

from __future__ import annotations

from textual import work

from mttui.core.drive import drive
from mttui.core.handle import ApprovalAnswer
from mttui.graph import events as ev
from mttui.widgets.history import HistoryView
from mttui.widgets.resume_notes import ResumeNotes

from .chat_compact import CompactChat
from .chat_messages import Note, ReadOnly, Resumed, ResumePreviewed


class ResumeChat(CompactChat):
    """The lazy resume of the chat screen (see the module docstring)."""

    DEFAULT_CSS = """
    ResumeChat ResumeNotes { display: none; }
    ResumeChat ResumeNotes.-visible { display: block; }
    """

    def preview_resume(self) -> None:
        """Open worker: read what the resume will do and post it (nothing written)."""
        preview = self.chat.preview()
        if not preview.empty:
            self.post_message(ResumePreviewed(preview))

    def on_resume_previewed(self, message: ResumePreviewed) -> None:
        preview = message.preview
        notes = self.query(ResumeNotes)
        if not notes:
            return
        # the approval panel and the pending lane say these two themselves
        shown = [w for w in preview.warnings
                 if w.get("code") not in ("approval_pending", "queue_held")]
        if shown or preview.decided:
            history = self.query_one(HistoryView)
            # still the newest lines (not when it was opened at a search hit)
            follow = (history.at_bottom or not history.items) and \
                history.highlight_seq is None and getattr(self, "around", None) is None
            notes.first().show(shown, approval=preview.approval is not None,
                               decided=preview.decided)
            notes.first().add_class("-visible")
            if follow:  # the notes take room from the history: its end stays in view
                self.call_after_refresh(history.scroll_end, animate=False, immediate=True)
        if preview.approval is not None and self.state != "read-only":
            self._answer_first(preview.approval)

    def on_resumed(self, message: Resumed) -> None:
        for notes in self.query(ResumeNotes):  # now inline in the history
            notes.remove_class("-visible")

    @work(thread=True, group="run", exit_on_error=False, name="approval")
    def _answer_first(self, request: ev.ApprovalRequested) -> None:
        """Ask the approval the session waits for; only an answer opens the session
        for writing, applies the resume and goes on with it."""
        answer = self.ask(request)
        if answer is None:  # left pending (the chat is closing): nothing written
            return
        handle = self.chat.open_for_writing()
        if handle is None:
            self.post_message(ReadOnly(self.chat.read_only or ""))
            return
        actual = self.resume_now() if not handle.resumed else handle.waiting_approval()
        if actual is None:
            self.post_message(Note("the approval no longer waits: nothing to answer",
                                   "warning"))
            return
        given = {request.request_id: answer}

        def ask(request: ev.ApprovalRequested) -> ApprovalAnswer | None:  # answered once
            return given.pop(request.request_id, None) or self.ask(request)

        drive(handle, None, emit=self.emit, ask=ask, pending=actual)
