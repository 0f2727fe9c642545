"""Status glyphs with an ASCII fallback (``MTTUI_ASCII=1``, or a terminal whose
encoding cannot show them), each the same width as the glyph it replaces."""

from __future__ import annotations

import os
import sys

UNICODE = {"pause": "⏸", "wait": "⧗", "stop": "⏹", "spin": "⟳", "warn": "⚠", "fail": "✗",
           "ok": "●", "no": "⊘"}
ASCII = {"pause": "=", "wait": "~", "stop": "#", "spin": "*", "warn": "!", "fail": "x",
         "ok": "o", "no": "-"}
SPINNER = ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
ASCII_SPINNER = ("|", "/", "-", "\\")


def ascii_only() -> bool:
    """``MTTUI_ASCII=1`` (``0`` forces Unicode), else when stdout cannot encode them."""
    flag = os.environ.get("MTTUI_ASCII", "").strip().lower()
    if flag:
        return flag not in ("0", "no", "false", "off")
    encoding = (getattr(sys.__stdout__, "encoding", None) or "").lower()
    return bool(encoding) and "utf" not in encoding


def glyph(name: str) -> str:
    return (ASCII if ascii_only() else UNICODE)[name]


def spinner(frame: int) -> str:
    frames = ASCII_SPINNER if ascii_only() else SPINNER
    return frames[frame % len(frames)]
