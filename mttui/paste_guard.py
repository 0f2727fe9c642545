"""Keeps a bracketed paste from turning into keys.

A terminal wraps pasted text in ``ESC [200~`` … ``ESC [201~``. Some terminals (xterm,
tmux before 3.4, …) pass an ``ESC`` inside the pasted text through unchanged, and
Textual's parser then reads it as the start of an escape sequence and re-issues what
follows as *key presses*: a pasted line break became Enter (the message was sent
half-pasted), and a pasted ``ESC ESC`` plus a digit could reach an approval as
Escape and "1". This filter sits in front of the parser and removes escape sequences
from the pasted text (as most terminals do themselves), so all of it stays one paste.

Pure string work on the input stream, chunk by chunk: a marker or a sequence split
across two reads is held back until the next read (only inside a paste; keys outside
one pass through at once, untouched).
"""

from __future__ import annotations

import re

START = "\x1b[200~"
END = "\x1b[201~"

# A complete escape sequence inside pasted text: CSI (colours, cursor moves), OSC up to
# BEL or ST, or ESC and one character. Removed whole, so a pasted coloured log reads as
# its text. (An ESC right before a line break is removed alone: the break stays.)
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[\x20-\x2f]*[\x30-\x5a\x5c\x5e-\x7e]"  # ESC (intermediates) final: alt+x, ESC ( B
)
# An escape sequence that may still be completed by the next read.
_OPEN = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[\x20-\x2f]+)?\Z")
# Held back at most this long: a longer unfinished sequence is not one.
_HOLD_MAX = 256


def clean(text: str) -> str:
    """Pasted text without escape sequences (and without any stray ``ESC``)."""
    return _SEQUENCE.sub("", text).replace("\x1b", "")


class PasteGuard:
    """Feed it each read of terminal input; it returns what the parser should see."""

    def __init__(self) -> None:
        self.inside = False  # between a paste's start and end markers
        self._held = ""  # inside a paste: the unfinished tail of the last read
        self._recent = ""  # outside: the last few characters (a start marker split in two)

    def filter(self, data: str) -> str:
        out: list[str] = []
        text = self._held + data
        self._held = ""
        while text:
            if not self.inside:
                seen = self._recent + text
                at = seen.find(START)
                if at < 0:
                    out.append(text)
                    self._recent = seen[-(len(START) - 1):]
                    break
                cut = at + len(START) - len(self._recent)  # where the paste's text begins
                out.append(text[:cut])
                text, self.inside, self._recent = text[cut:], True, ""
                continue
            at = text.find(END)
            if at >= 0:
                out.append(clean(text[:at]) + END)
                text, self.inside = text[at + len(END):], False
                continue
            open_tail = _OPEN.search(text)
            if open_tail is not None and len(text) - open_tail.start() <= _HOLD_MAX:
                self._held = text[open_tail.start():]
                text = text[:open_tail.start()]
            out.append(clean(text))
            break
        return "".join(out)

    def flush(self) -> str:
        """What is held back, at the end of input."""
        held, self._held = self._held, ""
        return clean(held)
