"""A read-only session says so in the prompt and the footer; when it is read-only
because another process writes it, the chat watches that process's lock and becomes
writable again once it has let go (the other process quit or closed the session)."""

from __future__ import annotations

from textual import work
from textual.timer import Timer

from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar

from .chat_messages import ReadOnly, Writable
from .chat_resume import ResumeChat

WRITING = ("stop", "compact", "steer", "resume_queue")  # off in a read-only session
LOCK_PROBE_SECONDS = 1.0  # how often a locked-out chat asks whether the lock is free


class ReadOnlyChat(ResumeChat):
    """See the module docstring."""

    _lock_probe: Timer | None = None
    _placeholder: str | None = None  # the prompt's own, while read-only shows its reason

    def refresh_bar(self, extra: str = "") -> None:
        raise NotImplementedError  # the screen's header bar (ChatScreen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in WRITING and self.state == "read-only":
            return None  # shown disabled in the footer
        return True

    def on_read_only(self, message: ReadOnly) -> None:
        prompt = self.query_one("#prompt", PromptArea)
        if self._placeholder is None:
            self._placeholder = str(prompt.placeholder)
        reason = message.reason or "open for writing in another process"
        prompt.placeholder = f"Read-only: this session is {reason}" \
            if reason.startswith("open") else f"Read-only: {reason}"
        self.refresh_bindings()
        if self.chat.read_only is not None and self._lock_probe is None:  # a lock-out
            self._lock_probe = self.set_interval(LOCK_PROBE_SECONDS, self._probe_lock)

    def _probe_lock(self) -> None:
        self._check_released()

    @work(thread=True, group="lock-probe", exclusive=True, exit_on_error=False,
          name="asking whether the session is free")
    def _check_released(self) -> None:
        if self.chat.released():
            self.post_message(Writable())

    def on_writable(self, message: Writable) -> None:
        if self._lock_probe is not None:
            self._lock_probe.stop()
            self._lock_probe = None
        prompt = self.query_one("#prompt", PromptArea)
        if self._placeholder is not None:
            prompt.placeholder, self._placeholder = self._placeholder, None
        prompt.disabled = False
        self.query_one(StatusBar).note = ""
        self.state = "idle"
        self.refresh_bar()
        self.refresh_bindings()
        prompt.focus()
        self.notify("The other process has let go of this session: it can be written here.",
                    title="Session is writable")
        self._preview_after_release()

    @work(thread=True, group="open", exit_on_error=False, name="previewing the resume")
    def _preview_after_release(self) -> None:
        self.preview_resume()  # what opening skipped while another process wrote it
