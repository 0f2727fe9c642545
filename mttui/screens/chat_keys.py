"""The chat's everyday keys: ``↑``/``↓`` recall earlier prompts, ``ctrl+c`` stops a run
or clears the prompt (on an empty one: press it again to quit), typed text always
reaches the prompt."""

from __future__ import annotations

from textual import events, on, work
from textual.actions import SkipAction
from textual.binding import Binding

from mttui.core.project_info import git_branch
from mttui.widgets.header import Header, HeaderBar
from mttui.widgets.history import HistoryView
from mttui.widgets.new_chat_hint import NewChatHint, hint_renderable
from mttui.widgets.prompt import PromptArea
from mttui.widgets.prompt_history import PromptHistory
from mttui.widgets.text import short_path

from .chat_messages import ProjectRead, PromptsLoaded, Unsent
from .chat_read_only import ReadOnlyChat

HISTORY_PAGE = 200  # the newest messages read for the prompt history
MODIFIERS = ("alt+", "ctrl+", "super+", "meta+", "hyper+")  # a key with one is no typing


class KeysChat(ReadOnlyChat):
    """See the module docstring."""

    BINDINGS = [
        Binding("up", "recall(-1)", "Earlier prompt", id="prompt.history_older", show=False,
                priority=True),
        Binding("down", "recall(1)", "Later prompt", id="prompt.history_newer", show=False,
                priority=True),
        Binding("ctrl+c", "clear_or_quit", "Stop the run; idle: clear the prompt (empty: quit)",
                id="clear_or_quit", show=False, priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.prompts = PromptHistory()
        self.project_line = ""  # the header's project folder and git branch
        self.project_path = ""  # the same, apart: the header shortens the path to fit
        self.project_branch: str | None = None
        self.header = Header()

    def on_mount(self) -> None:
        self.chat.on_output = self.emit  # live tool output, posted from the tool's thread
        self.set_interval(0.5, self._tick_tools)
        if getattr(self, "session_id", None) is None:  # a new chat: a short hint
            s = self.chat.settings
            hint = NewChatHint(hint_renderable(
                short_path(self.chat.service.project), s.provider, s.model, s.approval),
                id="new-chat-hint")
            self.mount(hint, before=self.query_one("#prompt", PromptArea))

    def drop_hint(self) -> None:
        for hint in self.query(NewChatHint):
            hint.remove()

    def _tick_tools(self) -> None:
        live = getattr(self, "live", None)
        if live is not None:
            live.tick()

    # -- the header's project --------------------------------------------------------------
    @work(thread=True, group="project", exit_on_error=False, name="project")
    def read_project(self) -> None:
        project = self.chat.service.project
        branch = git_branch(project)
        self.post_message(ProjectRead(short_path(project) + (f" ({branch})" if branch else ""),
                                      short_path(project), branch))

    def on_project_read(self, message: ProjectRead) -> None:
        self.project_line = message.text
        self.project_path, self.project_branch = message.path, message.branch
        self.refresh_bar()

    def fit_header(self) -> None:
        """Show ``self.header`` (the bar fits it to its width, also after a resize)."""
        self.query_one("#chat-bar", HeaderBar).show(self.header)

    # -- prompt history -----------------------------------------------------------------
    def load_prompts(self) -> None:
        """Open worker: the user's earlier prompts of this session."""
        sid = self.chat.session_id
        if sid is None:
            return
        page = self.chat.service.history(sid, limit=HISTORY_PAGE)
        self.post_message(PromptsLoaded([m.content for m in page.messages
                                         if m.role == "user" and m.content.strip()]))

    def on_prompts_loaded(self, message: PromptsLoaded) -> None:
        sent = self.prompts.texts
        self.prompts = PromptHistory([*message.texts, *sent])

    @on(PromptArea.Submitted)
    def _remember_prompt(self, event: PromptArea.Submitted) -> None:
        self.prompts.add(event.text)
        self.drop_hint()

    def on_unsent(self, message: Unsent) -> None:
        prompt = self.query_one("#prompt", PromptArea)
        typed = prompt.text.strip()  # typed since: kept, after the text given back
        prompt.text = message.text + (f"\n{prompt.text}" if typed else "")
        prompt.move_cursor(prompt.document.end)
        self.notify(f"Not sent: {message.why}. It is back in the prompt.", severity="warning")

    def action_recall(self, direction: int) -> None:
        """``↑`` on the prompt's first line (``↓`` on its last) while no approval or
        list needs the arrows: the previous (next) prompt of this session."""
        prompt = self.query_one("#prompt", PromptArea)
        if not prompt.has_focus:
            raise SkipAction()
        row, last = prompt.cursor_location[0], prompt.document.line_count - 1
        if direction < 0:
            if row != 0 and not self.prompts.walking:
                raise SkipAction()
            text = self.prompts.older(prompt.text)
        else:
            if row != last or not self.prompts.walking:
                raise SkipAction()
            text = self.prompts.newer()
        if text is None:
            raise SkipAction()
        prompt.text = text
        prompt.move_cursor(prompt.document.end)

    # -- ctrl+c -----------------------------------------------------------------------------
    async def action_clear_or_quit(self) -> None:
        """``ctrl+c``: copies a selection; while a run goes it stops the run (as ``escape``,
        the app stays open and the prompt keeps its text); else it clears the prompt, and
        on an empty prompt it arms quit (twice quits)."""
        prompt = self.query_one("#prompt", PromptArea)
        if prompt.has_focus and prompt.selected_text:
            prompt.action_copy()
        elif self.cancel_held_send():  # enter pressed while the session opened: not sent
            return
        elif self.state in ("running", "starting"):
            await self.run_action("stop")
        elif prompt.text:
            self.prompts.add(prompt.text)  # cleared, not lost: ↑ brings it back
            prompt.clear()
            prompt.focus()
        else:
            await self.app.run_action("quit_twice")

    # -- typing never lands nowhere ----------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        """A plain printable key (space too) in the history goes to the prompt, which takes
        the focus: after a click, a sentence is typed, never run as commands. The
        history's actions take a modifier (``alt+n`` fork, ``alt+d``/``alt+x``/``alt+r``)."""
        if not isinstance(self.focused, HistoryView) or not event.is_printable \
                or not event.character or event.key.startswith(MODIFIERS):
            return
        event.stop()
        event.prevent_default()
        prompt = self.query_one("#prompt", PromptArea)
        if prompt.disabled:  # read-only: a letter typed is no command on nothing selected
            return
        prompt.focus()
        prompt.insert(event.character)
