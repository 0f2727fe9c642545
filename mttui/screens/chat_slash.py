"""Slash commands typed in the chat prompt (``mttui.core.slash``), and the status bar's
context-left and cost figures."""

from __future__ import annotations

from dataclasses import dataclass

from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.widgets import Static, TextArea

from mttui.config import Settings
from mttui.core.attachments import AttachmentError
from mttui.core.attachments import check as check_files
from mttui.core.model_choice import session_settings
from mttui.core.project_files import ProjectFiles
from mttui.core.slash import (
    Parsed,
    SlashContext,
    SlashOutcome,
    UnknownCommand,
    check,
    completions,
    parse,
    run_command,
)
from mttui.core.usage import context_left, format_cost, usage_view
from mttui.graph import events as ev
from mttui.messages import RunEventMessage
from mttui.session.errors import MttuiError
from mttui.session.service import SessionService
from mttui.widgets.completion import CompletionList, Trigger, trigger_of
from mttui.widgets.history import HistoryView
from mttui.widgets.prompt import PromptArea
from mttui.widgets.status import StatusBar
from mttui.widgets.text import literal

from .chat_keys import KeysChat
from .chat_messages import Note, Opened
from .chat_rewind import time_travel_command
from .mcp import open_mcp_screen

# handled by the chat screen's own code (dialogs, the compaction worker)
SCREEN_COMMANDS = ("compact",)


@dataclass
class SlashDone(Message):
    """A command finished in a worker: what it said and did."""

    outcome: SlashOutcome


@dataclass
class SlashFailed(Message):
    """A command was refused: its text goes back into an empty prompt (nothing lost)."""

    text: str


@dataclass
class UsageShown(Message):
    """The session's context left (% or -1) and cost ("" when unpriced)."""

    left: int
    cost: str


@dataclass
class FilesRanked(Message):
    """The ``@`` list for ``trigger``, ranked in a worker."""

    trigger: Trigger
    files: list[str]


@dataclass
class InstructionsLine(Message):
    """Which ``AGENTS.md`` files the next run loads (empty: none)."""

    text: str


class SlashChat(KeysChat):
    """The slash-command side of the chat screen, and the ``/`` and ``@`` lists."""

    DEFAULT_CSS = """
    SlashChat #instructions-line { height: 1; padding: 0 1; color: $text-muted;
                                   display: none; }
    SlashChat #instructions-line.-visible { display: block; }
    """

    service: SessionService  # what the chat screen provides
    settings: Settings
    files: ProjectFiles | None = None  # the project's files, read on the first "@"

    def on_mount(self) -> None:
        completion = self.query_one(CompletionList)
        prompt = self.query_one(PromptArea)
        prompt.completion, completion.target = completion, prompt
        self.read_instructions()

    @work(thread=True, group="instructions", exclusive=True, exit_on_error=False,
          name="AGENTS.md")
    def read_instructions(self) -> None:
        from mttui.graph.instructions import load_instructions

        project = self.service.project
        self.post_message(InstructionsLine(load_instructions(project).loaded_line(project)))

    def on_instructions_line(self, message: InstructionsLine) -> None:
        line = self.query_one("#instructions-line", Static)
        line.update(Text(message.text, no_wrap=True, overflow="ellipsis"))
        line.set_class(bool(message.text), "-visible")

    # -- the completion lists -------------------------------------------------------
    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        self.update_completion()

    def update_completion(self) -> None:
        completion = self.query_one(CompletionList)
        trigger = trigger_of(self.query_one(PromptArea))
        if trigger is None:
            completion.hide()
        elif trigger.kind == "slash":
            found = completions(trigger.query)
            if len(found) == 1 and found[0].name == trigger.query:
                completion.hide()  # typed in full: enter sends it
                return
            completion.show(trigger, [(f"/{c.name} ", f"/{c.name} {c.usage}".strip(),
                                       c.summary) for c in found])  # fmt: skip
        else:
            self.rank_files(trigger)

    @work(thread=True, exclusive=True, group="files", exit_on_error=False, name="@ files")
    def rank_files(self, trigger: Trigger) -> None:
        if self.files is None:
            files = ProjectFiles(self.service.project)
            files.load()
            self.files = files
        self.post_message(FilesRanked(trigger, self.files.rank(trigger.query)))

    def on_files_ranked(self, message: FilesRanked) -> None:
        if trigger_of(self.query_one(PromptArea)) != message.trigger:
            return  # typed on meanwhile: a newer ranking comes
        rows = [(f'@"{f}" ' if " " in f else f"@{f} ", f, "") for f in message.files]
        self.query_one(CompletionList).show(message.trigger, rows)

    def slash_submit(self, event: PromptArea.Submitted) -> bool:
        """Handle ``event`` when it is a command (``True``); ``False``: send it."""
        self.query_one(CompletionList).hide()
        if time_travel_command(self, event.text):  # /rewind, /rewind undo, /fork: pickers
            event.take()
            return True
        parsed = parse(event.text, self.settings.provider)
        if parsed is None:
            try:  # a refused or missing @file: said now, the text stays to be corrected
                check_files(self.service.project, event.text)
            except AttachmentError as exc:
                self.notify(escape(literal(str(exc))), severity="error")
                return True
            return False
        if parsed.name in SCREEN_COMMANDS:
            return False
        try:
            check(parsed)
        except UnknownCommand as exc:
            self.notify(escape(literal(str(exc))), severity="error")  # the text stays
            return True
        if parsed.name == "permissions" and not parsed.args:
            return False  # the permissions dialog
        event.take()
        if parsed.name in ("help", "exit"):
            self.call_later(self.app.run_action, "help" if parsed.name == "help" else "quit")
        elif parsed.name == "mcp":  # the dialog starts the servers in its own worker
            handle = self.chat.handle
            settings = handle.settings if handle is not None else self.settings
            self.call_later(open_mcp_screen, self.app, settings, self.service.project)
        else:
            self.run_slash(parsed)
        return True

    @work(thread=True, group="slash", exit_on_error=False, name="slash command")
    def run_slash(self, parsed: Parsed) -> None:
        handle = self.chat.handle
        settings = handle.settings if handle is not None else self.settings
        ctx = SlashContext(self.service, settings, self.chat.session_id,
                           self.chat.open_for_writing)  # fmt: skip
        try:
            outcome = run_command(parsed, ctx)
            for event in outcome.events or ():
                self.emit(event)
        except MttuiError as exc:
            self.post_message(Note(str(exc), "error"))
            self.post_message(SlashFailed(f"/{parsed.name} {parsed.args}".rstrip()))
            return
        self.post_message(SlashDone(outcome))

    def on_slash_failed(self, message: SlashFailed) -> None:
        prompt = self.query_one(PromptArea)
        if not prompt.text:
            prompt.text = message.text
            prompt.move_cursor(prompt.document.end)

    def on_slash_done(self, message: SlashDone) -> None:
        outcome = message.outcome
        if outcome.text:
            self.notify(escape(literal(outcome.text)), title=f"/{outcome.command}", timeout=8)
        status = self.query_one(StatusBar)
        if outcome.action == "cleared":
            status.used, status.context_left = 0, 100
            history = self.query_one(HistoryView)
            history.set_markers(self.service.markers(str(self.chat.session_id)))
            history.load_newest()
            self.refresh_lane()
        elif outcome.action == "model":
            status.model = str(outcome.data.get("model") or status.model)

    # -- the status bar's usage figures ------------------------------------------------
    @on(RunEventMessage)
    def _usage_event(self, message: RunEventMessage) -> None:
        event = message.event
        status = self.query_one(StatusBar)
        if isinstance(event, (ev.UsageUpdated, ev.Compressed)):
            used = (event.input_tokens if isinstance(event, ev.UsageUpdated)
                    else event.tokens_after)  # fmt: skip
            left = context_left(used, status.token_limit)
            status.context_left = -1 if left is None else left
        elif isinstance(event, ev.RunEnded):
            self.refresh_usage()
            self.read_instructions()  # an edited or new AGENTS.md shows after the run

    @on(Opened)
    def _usage_opened(self, message: Opened) -> None:
        info = self.chat.info
        if info is not None:  # the session's own /model (unless --model was given)
            chosen = session_settings(self.settings, info.chosen_model).model
            self.query_one(StatusBar).model = chosen
        self.refresh_usage()

    @work(thread=True, group="usage", exclusive=True, exit_on_error=False, name="usage")
    def refresh_usage(self) -> None:
        sid = self.chat.session_id
        if sid is None:
            return
        view = usage_view(self.service, sid, self.settings.token_limit)
        left = view.context_left_pct
        self.post_message(UsageShown(-1 if left is None else left,
                                     format_cost(view.usage.cost_usd)))

    def on_usage_shown(self, message: UsageShown) -> None:
        status = self.query_one(StatusBar)
        status.context_left, status.cost = message.left, message.cost
