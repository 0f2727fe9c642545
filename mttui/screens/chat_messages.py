"""What the chat screen's workers tell the screen (Textual's "messages up")."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from mttui.core.permissions import RuleEntry
from mttui.core.resume_preview import ResumePreview
from mttui.graph.events import ApprovalRequested
from mttui.session.markers import Marker
from mttui.widgets.text import literal


@dataclass
class Opened(Message):
    """The session's info is loaded: markers and the last token usage to show."""

    markers: list[Marker]
    used: tuple[int, bool] | None


@dataclass
class Resumed(Message):
    """The resume was applied (its warnings are in the markers now)."""

    markers: list[Marker]
    mode: str
    warned: bool


@dataclass
class ReadOnly(Message):
    """The session cannot be written here; ``unsent`` goes back into the prompt."""

    reason: str
    unsent: str = ""


@dataclass
class Unsent(Message):
    """A message was not sent (stopped before its run, or the queue refused it): its
    text goes back into the prompt."""

    text: str
    why: str


class Writable(Message):
    """The process that wrote the session has let go: it can be written here now."""


@dataclass
class StateChanged(Message):
    """A worker moved the run state (``idle``, ``starting``…)."""

    state: str


@dataclass
class AskAgain(Message):
    """An approval that was pending when the session stopped: ask it again."""

    request: ApprovalRequested


@dataclass
class MarkersChanged(Message):
    markers: list[Marker]


@dataclass
class StatusNote(Message):
    """The status bar's note (empty: none)."""

    text: str


@dataclass
class TitleChanged(Message):
    """The chat bar shows a new session's title."""


@dataclass
class Note(Message):
    """A one-line notification from a worker (its text may echo what the user typed:
    control characters are made visible, see ``widgets.text.literal``)."""

    text: str
    severity: str = "information"
    title: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.text, self.title = literal(self.text), literal(self.title)


@dataclass
class LaneRows(Message):
    """The pending lane as a worker read it (never read on the event loop)."""

    rows: list[dict[str, object]] = field(default_factory=list)
    held: bool = False
    live: bool = False  # rows of this process's open lane (not a read-only view)


@dataclass
class Accepted(Message):
    """A queued or steered text was written: clear it from the prompt."""

    text: str
    what: str


@dataclass
class SendAgain(Message):
    """A steer that was never delivered is sent again as a new message."""

    text: str


@dataclass
class Kick(Message):
    """The queue may run again (retry, resume)."""


@dataclass
class GrantsChanged(Message):
    """The session's grants (tools approved for the session) as read by a worker."""

    grants: list[str]
    show: bool = False  # open the /permissions list with them
    rules: list[RuleEntry] = field(default_factory=list)  # the project's permission rules


@dataclass
class ResumePreviewed(Message):
    """What the resume will do, read when the session opened (nothing written yet)."""

    preview: ResumePreview


@dataclass
class PromptsLoaded(Message):
    """The user's earlier prompts of the session (oldest first), for ``↑``."""

    texts: list[str]


@dataclass
class ProjectRead(Message):
    """The header's project: folder and git branch."""

    text: str
    path: str = ""  # the whole folder (``~`` for home), shortened by the header
    branch: str | None = None
