"""Bounded capture of a stream: the head and the tail kept, the middle counted.

Memory stays at about ``head + 2 * tail`` bytes however much is fed in, so a
command printing gigabytes costs no more than one printing a page.
"""

from __future__ import annotations

from .paths import OUTPUT_CAP


def _from_boundary(data: bytes) -> bytes:
    """``data`` without the UTF-8 continuation bytes a cut left at its start."""
    skip = 0
    while skip < min(len(data), 3) and (data[skip] & 0xC0) == 0x80:
        skip += 1
    return data[skip:]


class BoundedCapture:
    """Keeps the first ``head`` and the last ``tail`` bytes of what is fed in."""

    def __init__(self, limit: int = OUTPUT_CAP) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def tail(self) -> bytes:
        return bytes(self._tail[-self.tail_limit :]) if self._tail else b""

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def recent(self, size: int) -> str:
        """The last ``size`` bytes seen (head included when the tail is short), decoded."""
        data = (bytes(self.head) + self.tail)[-size:]
        if self.total > size:
            data = _from_boundary(data)
        return data.decode("utf-8", errors="replace")

    def text(self) -> str:
        """Everything when it fitted; else head, a marker with how much was cut, tail."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        if self.omitted <= 0:
            return head + self.tail.decode("utf-8", errors="replace")
        # the head may end inside a character: leave the partial one to the marker
        tail = _from_boundary(self.tail).decode("utf-8", errors="replace")
        marker = f"\n[output truncated: {self.omitted} more bytes not shown]\n"
        return head + marker + tail
