"""The system prompt that asks a model for a compression summary (compression.md).

The offline model recognises :data:`COMPRESS_MARKER` and answers with a
``<compressed_snapshot>`` built from the messages it was given.
"""

from __future__ import annotations

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
