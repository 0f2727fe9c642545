"""Project instructions: the ``AGENTS.md`` files that join the system prompt of every run.

Read at the start of every run (an edited file replaces its old text): the user's
global ``AGENTS.md`` (next to ``config.toml``) first, then ``AGENTS.md`` in each
directory from the enclosing git repository's root down to the project directory
(outermost first). Over :data:`CAP` bytes in total the text is cut: beginnings
are kept, outer files first, and a note says what was cut.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mttui.session.paths import config_file

FILE_NAME = "AGENTS.md"
CAP = 32 * 1024  # bytes of instruction text, all files together


@dataclass(frozen=True)
class Instructions:
    """The loaded files (in prompt order), the prompt section and what the cap cut."""

    files: tuple[Path, ...] = ()
    section: str = ""
    cut: tuple[str, ...] = field(default=())  # notes on what the 32 KB cap left out

    def loaded_line(self, project: Path) -> str:
        """The one line the user sees: which files were loaded (and whether cut)."""
        if not self.files:
            return ""
        names = ", ".join(shown_path(p, project) for p in self.files)
        extra = " (cut at 32 KB)" if self.cut else ""
        return f"instructions loaded: {names}{extra}"


def shown_path(path: Path, project: Path) -> str:
    """``path`` relative to the project when inside it, else ``~``-abbreviated."""
    try:
        return str(path.relative_to(project))
    except ValueError:
        pass
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (dir or file)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def instruction_files(project: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Existing ``AGENTS.md`` files in prompt order: the global one, then outermost first."""
    project = project.resolve()
    env = os.environ if environ is None else environ
    found: list[Path] = []
    global_file = config_file(env).parent / FILE_NAME
    if global_file.is_file():
        found.append(global_file.resolve())
    root = git_root(project) or project
    chain: list[Path] = []
    for directory in (project, *project.parents):
        chain.append(directory)
        if directory == root:
            break
    for directory in reversed(chain):
        candidate = directory / FILE_NAME
        if candidate.is_file() and candidate.resolve() not in found:
            found.append(candidate.resolve())
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def _cut(text: str, budget: int) -> str:
    """The longest beginning of ``text`` of at most ``budget`` UTF-8 bytes."""
    return text.encode("utf-8")[:budget].decode("utf-8", errors="ignore")


def load_instructions(
    project: Path, environ: Mapping[str, str] | None = None, cap: int = CAP
) -> Instructions:
    """Read the instruction files now; unreadable files are skipped."""
    files: list[Path] = []
    parts: list[str] = []
    cut: list[str] = []
    budget = cap
    for path in instruction_files(project, environ):
        text = _read(path)
        if text is None:
            continue
        label = shown_path(path, project.resolve())
        size = len(text.encode("utf-8"))
        if budget <= 0:
            cut.append(f"{label} left out ({size} bytes)")
            continue
        files.append(path)
        if size > budget:
            cut.append(f"{label} cut after {budget} of {size} bytes")
            text = _cut(text, budget)
        budget -= len(text.encode("utf-8"))
        parts.append(f"## {label}\n\n{text.rstrip()}")
    if not parts:
        return Instructions()
    section = (
        "# Project instructions (AGENTS.md)\n\nFollow these instructions from the user's "
        "AGENTS.md files (outermost first).\n\n" + "\n\n".join(parts)
    )
    if cut:
        section += (f"\n\n[note: the instructions are over {cap // 1024} KB; "
                    + "; ".join(cut) + "]")  # fmt: skip
    return Instructions(tuple(files), section, tuple(cut))


class Announcer:
    """The ``AGENTS.md`` files as they are at each run: the system prompt to use, and
    the "loaded" line when the set of files changed since it was last announced."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.announced: tuple[Path, ...] = ()

    def refresh(self) -> tuple[str, str | None]:
        """``(system prompt, loaded line or None)``."""
        from .prompt import system_prompt

        loaded = load_instructions(self.project)
        prompt = system_prompt(self.project, loaded.section)
        if loaded.files == self.announced:
            return prompt, None
        self.announced = loaded.files
        return prompt, loaded.loaded_line(self.project) or None
