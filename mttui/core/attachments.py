"""``@path`` mentions: project files attached to a prompt (essentials.md "@file mentions").

The log keeps the typed text and ``attachments: [{path, sha256, bytes}]``; the model
receives the text followed by each file in a ``<file path="…">…</file>`` block,
read at send time and capped at :data:`FILE_CAP` bytes with a note (no more than
that is read; ``sha256`` is of the bytes sent, ``bytes`` the file's size). Only a
regular file whose real path is in the project is read (see
:mod:`mttui.graph.confined`: no symlink out, no FIFO or device, no hard link with a
name outside); anything else that exists is refused before anything is sent.

What counts as a mention: ``@`` at the start of a word (not in an e-mail address,
not inside backticks or a fenced code block) followed by a path that exists, or
that looks like one (it has a ``/`` or a ``.``): ``@property`` in prose is no file.
``@"a path with spaces"`` quotes a path. A mention of a path that does not exist
(``@types/node``, ``a @b.com``) stays text: the message is sent, with a notice
naming it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mttui.graph.confined import Missing, Refused, read_confined
from mttui.graph.events import Notice, RunEvent, RunStarted
from mttui.graph.tools.paths import display
from mttui.session.errors import MttuiError

FILE_CAP = 32 * 1024  # bytes of one file the model receives
MAX_FILES = 20
_MENTION = re.compile(r'(?<![\w@`])@(?:"([^"\n]+)"|([^\s@`"]+))')
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_TRAILING = ".,;:!?)]}'"


class AttachmentError(MttuiError):
    """A mentioned file that cannot be attached (one line; nothing was sent)."""


@dataclass(frozen=True)
class Attachment:
    path: str  # relative to the project
    sha256: str
    bytes: int
    content: str
    cut: int = 0  # bytes not sent (over FILE_CAP)

    def record(self) -> dict[str, object]:
        """The ``attachments`` entry of the logged user message."""
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}

    def block(self) -> str:
        note = (f"\n[cut at {FILE_CAP // 1024} KB: {self.cut} more bytes not shown]"
                if self.cut else "")  # fmt: skip
        body = self.content if self.content.endswith("\n") or not self.content else (
            self.content + "\n")
        return f'<file path="{self.path}">\n{body}</file>{note}'


def mentions(project: Path, text: str) -> list[str]:
    """The paths ``text`` mentions, in order, without duplicates."""
    bare = _CODE.sub(lambda m: " " * len(m.group(0)), text)
    found: list[str] = []
    for m in _MENTION.finditer(bare):
        quoted, raw = m.group(1), m.group(2)
        path = quoted if quoted is not None else _trim(project, raw)
        if path is None or path in found:
            continue
        found.append(path)
    return found


def _trim(project: Path, raw: str) -> str | None:
    """The mentioned path (trailing punctuation dropped unless it is part of a file)."""
    candidates = [raw]
    stripped = raw.rstrip(_TRAILING)
    if stripped and stripped != raw:
        candidates.append(stripped)
    for c in candidates:
        if _exists(project / c):
            return c
    word = candidates[-1]
    return word if ("/" in word or "." in word) and word not in (".", "..") else None


@dataclass(frozen=True)
class Mentioned:
    """The files a text attaches, and the mentioned paths that name no file."""

    files: list[Attachment] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def notice(self) -> str | None:
        """The line that names what was left as text (``None`` when nothing was)."""
        if not self.missing:
            return None
        names = ", ".join("@" + m for m in self.missing)
        return f"no such file, left as text: {names}"


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # unreadable, a loop, a name too long: not a file to attach
        return False


def resolve(project: Path, text: str) -> Mentioned:
    """Read every mentioned file now; :class:`AttachmentError` names the first one that
    exists and cannot be attached."""
    paths = mentions(project, text)
    if len(paths) > MAX_FILES:
        raise AttachmentError(f"too many @files ({len(paths)}); at most {MAX_FILES}")
    found = Mentioned()
    for p in paths:
        try:
            found.files.append(_read(project, p))
        except Missing:
            found.missing.append(p)
    return found


def check(project: Path, text: str) -> None:
    """Refuse (one line) before anything is sent: outside the project, not a regular
    file, a directory or a binary file. A missing file is no error (it stays text)."""
    resolve(project, text)


def _read(project: Path, raw: str) -> Attachment:
    try:
        got = read_confined(project, raw, FILE_CAP)
    except Missing:
        raise
    except Refused as exc:
        why = str(exc)
        if why in ("outside the project", "a symlink to outside the project"):
            why += "; refused"
        elif why == "is a directory":
            why += " (mention files)"
        raise AttachmentError(f"@{raw}: {why}") from None
    if b"\0" in got.data[:8192]:
        raise AttachmentError(f"@{raw}: looks like a binary file; not attached")
    shown = got.data.decode("utf-8", errors="ignore" if got.cut else "replace")
    return Attachment(display(project, got.path), hashlib.sha256(got.data).hexdigest(),
                      got.size, shown, got.cut)  # fmt: skip


def with_notice(events: Iterator[RunEvent], text: str | None) -> Iterator[RunEvent]:
    """``events`` with a warning ``text`` right after the run starts (when there is one)."""
    for event in events:
        yield event
        if text is not None and isinstance(event, RunStarted):
            yield Notice("warning", text)
            text = None


def model_text(text: str, attachments: list[Attachment]) -> str:
    """What the model receives: the typed text, then one block per file."""
    if not attachments:
        return text
    return text + "\n\n" + "\n\n".join(a.block() for a in attachments)
