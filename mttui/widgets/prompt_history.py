"""The prompts sent in a session, recalled with ``↑``/``↓`` in the prompt (as in a shell)."""

from __future__ import annotations

from collections.abc import Iterable


class PromptHistory:
    """Earlier prompts, oldest first. ``older``/``newer`` walk them; the text being
    typed when the walk started comes back at its end, nothing typed is lost."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.texts: list[str] = []
        for text in texts:
            self.add(text)
        self._at: int | None = None  # index of the recalled prompt; None: the draft
        self._draft = ""

    @property
    def walking(self) -> bool:
        return self._at is not None

    def add(self, text: str) -> None:
        """A sent prompt (a repeat of the last one is kept once); ends the walk."""
        if text.strip() and (not self.texts or self.texts[-1] != text):
            self.texts.append(text)
        self._at = None

    def older(self, current: str) -> str | None:
        """The prompt before the one shown (``None``: none older)."""
        if not self.texts or self._at == 0:
            return None
        if self._at is None:
            self._draft = current
            self._at = len(self.texts)
        self._at -= 1
        return self.texts[self._at]

    def newer(self) -> str | None:
        """The prompt after the one shown, then the draft (``None``: not walking)."""
        if self._at is None:
            return None
        self._at += 1
        if self._at >= len(self.texts):
            self._at = None
            return self._draft
        return self.texts[self._at]

    def reset(self) -> None:
        self._at = None
