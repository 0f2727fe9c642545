"""The system prompt of the agent (sent with every call, never stored in the state)."""

from __future__ import annotations

from pathlib import Path

SYSTEM_PROMPT = """You are mttui, a coding agent working in a terminal.
The project directory is {project}; every path you use is relative to it and must stay inside it.
Tools: read_file, list_dir, search_files, write_file, edit_file (exact, unique replacement)
and shell (bash in the project directory). Read before you edit. Prefer small, verifiable
steps. When a tool result says "denied", "cancelled" or "interrupted", do not retry the same
call on your own; say what happened and ask how to go on. Answer in concise Markdown."""


def system_prompt(project: Path, instructions: str = "") -> str:
    """The base prompt, then the project instructions (``AGENTS.md``) when there are any."""
    base = SYSTEM_PROMPT.format(project=project)
    return f"{base}\n\n{instructions}" if instructions else base
