"""``@path`` mentions: project files attached to a prompt (essentials.md "@file mentions").

The log keeps the typed text and ``attachments: [{path, sha256, bytes}]``; the model
receives the text followed by each file in a ``<file path="…">…</file>`` block,
read at send time and capped at :data:`FILE_CAP` bytes with a note. Paths are
confined like the tools' (outside the project, also through a symlink: refused).

What counts as a mention: ``@`` at the start of a word (not in an e-mail address,
not inside backticks or a fenced code block) followed by a path that exists, or
that looks like one (it has a ``/`` or a ``.``): ``@property`` in prose is no file.
``@"a path with spaces"`` quotes a path.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mttui.graph.tools.paths import ToolError, confine, display
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
        if (project / c).exists():
            return c
    word = candidates[-1]
    return word if ("/" in word or "." in word) and word not in (".", "..") else None


def resolve(project: Path, text: str) -> list[Attachment]:
    """Read every mentioned file now; :class:`AttachmentError` names the first bad one."""
    paths = mentions(project, text)
    if len(paths) > MAX_FILES:
        raise AttachmentError(f"too many @files ({len(paths)}); at most {MAX_FILES}")
    return [_read(project, p) for p in paths]


def check(project: Path, text: str) -> None:
    """Refuse (one line) before anything is sent: outside the project, missing, a
    directory or a binary file."""
    resolve(project, text)


def _read(project: Path, raw: str) -> Attachment:
    try:
        path = confine(project, raw, must_exist=True)
    except ToolError:
        if not _inside(project, raw):
            raise AttachmentError(f"@{raw}: outside the project; refused") from None
        raise AttachmentError(f"@{raw}: no such file") from None
    if path.is_dir():
        raise AttachmentError(f"@{raw}: is a directory (mention files)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AttachmentError(f"@{raw}: cannot read: {exc.strerror or exc}") from None
    if b"\0" in data[:8192]:
        raise AttachmentError(f"@{raw}: looks like a binary file; not attached")
    shown = data[:FILE_CAP].decode("utf-8", errors="ignore" if len(data) > FILE_CAP
                                   else "replace")  # fmt: skip
    return Attachment(display(project, path), hashlib.sha256(data).hexdigest(), len(data),
                      shown, max(0, len(data) - FILE_CAP))  # fmt: skip


def _inside(project: Path, raw: str) -> bool:
    root = project.resolve()
    candidate = Path(raw).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    return resolved == root or root in resolved.parents


def model_text(text: str, attachments: list[Attachment]) -> str:
    """What the model receives: the typed text, then one block per file."""
    if not attachments:
        return text
    return text + "\n\n" + "\n\n".join(a.block() for a in attachments)
