"""The system prompt that asks a model for a compression summary (compression.md).

The offline model recognises :data:`COMPRESS_MARKER` and answers with a
``<compressed_snapshot>`` built from the messages it was given.
:func:`snapshot_markdown` turns that shape into Markdown for display.
"""

from __future__ import annotations

import re

COMPRESS_MARKER = "[mttui:compress-history]"

SNAPSHOT_SECTIONS = (
    "current_goal",
    "key_knowledge",
    "file_state",
    "decisions",
    "open_tasks",
    "important_tool_results",
)

COMPRESS_SYSTEM_PROMPT = f"""{COMPRESS_MARKER}
You compress the earlier part of a conversation between a user and a coding
agent so that the agent can continue the work without the full history.
Write only a snapshot in exactly this shape, each section as short bullet points:

<compressed_snapshot>
<current_goal>what the user is trying to achieve right now</current_goal>
<key_knowledge>facts, constraints and conventions learned so far</key_knowledge>
<file_state>files read, created or changed, and their relevant state</file_state>
<decisions>decisions made and why</decisions>
<open_tasks>what is left to do</open_tasks>
<important_tool_results>tool results the agent will still need</important_tool_results>
</compressed_snapshot>

If the input starts with an earlier snapshot, merge it into the new one.
Keep file paths, names, numbers and error messages exact."""


def compress_request(instructions: str | None = None) -> str:
    """The system prompt, with the user's extra instructions (``/compact TEXT``)."""
    if not instructions:
        return COMPRESS_SYSTEM_PROMPT
    return f"{COMPRESS_SYSTEM_PROMPT}\n\nAdditional instructions: {instructions.strip()}"


_TAG = re.compile(r"[ \t]*<(/?)([a-z_]+)>[ \t]*\n?")


def snapshot_markdown(summary: str) -> str:
    """A ``<compressed_snapshot>`` as Markdown (a bold title per section), for display;
    other text (a model that answered in Markdown) is returned unchanged."""

    def tag(m: re.Match[str]) -> str:
        closing, name = m.group(1), m.group(2)
        if name == "compressed_snapshot":
            return ""
        if name not in SNAPSHOT_SECTIONS:
            return m.group(0)
        return "\n\n" if closing else f"\n\n**{name.replace('_', ' ').capitalize()}**\n\n"

    return re.sub(r"\n{3,}", "\n\n", _TAG.sub(tag, summary)).strip()
