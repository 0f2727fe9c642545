"""Project instructions: the ``AGENTS.md`` files that join the system prompt of every run.

Read at the start of every run (an edited file replaces its old text): the user's
global ``AGENTS.md`` (next to ``config.toml``) first, then ``AGENTS.md`` in each
directory from the enclosing git repository's root down to the project directory
(outermost first). Over :data:`CAP` bytes in total the text is cut: beginnings
are kept, outer files first, and a note says what was cut.

Each file is read through :func:`~mttui.graph.confined.read_confined`: only a
regular file whose real path is inside its root (the git repository, or the
project directory outside git; the directory of ``config.toml`` for the global
one), and no more of it than the prompt can still take. A file refused (a symlink
out, a FIFO, a device, a hard link with a name outside) is named in the "loaded"
line and never sent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mttui.session.paths import config_file

from .confined import Missing, Refused, read_confined

FILE_NAME = "AGENTS.md"
CAP = 32 * 1024  # bytes of instruction text, all files together


@dataclass(frozen=True)
class Instructions:
    """The loaded files (in prompt order), the prompt section and what the cap cut."""

    files: tuple[Path, ...] = ()
    section: str = ""
    cut: tuple[str, ...] = field(default=())  # notes on what the 32 KB cap left out
    refused: tuple[str, ...] = field(default=())  # "name: why" of files not read

    def loaded_line(self, project: Path) -> str:
        """The one line the user sees: which files were loaded (and whether cut), and
        which were refused."""
        parts = []
        if self.files:
            names = ", ".join(shown_path(p, project) for p in self.files)
            parts.append(f"instructions loaded: {names}" + (" (cut at 32 KB)" if self.cut
                                                             else ""))  # fmt: skip
        if self.refused:
            parts.append("instructions not read: " + "; ".join(self.refused))
        return "; ".join(parts)


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


def _places(project: Path, env: Mapping[str, str]) -> list[tuple[Path, Path, str]]:
    """``(file, root, root's name)`` of every place an ``AGENTS.md`` may be, in order."""
    project = project.resolve()
    conf = config_file(env).parent
    places = [(conf / FILE_NAME, conf, "the config directory")]
    repo = git_root(project)
    root = repo or project
    chain: list[Path] = []
    for directory in (project, *project.parents):
        chain.append(directory)
        if directory == root:
            break
    where = "the repository" if repo else "the project"
    places += [(d / FILE_NAME, root, where) for d in reversed(chain)]
    return places


def instruction_files(project: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Existing ``AGENTS.md`` names in prompt order: the global one, then outermost
    first (whether they may be read is decided when they are)."""
    env = os.environ if environ is None else environ
    return [p for p, _, _ in _places(project, env) if os.path.lexists(p)]


def _read(path: Path, root: Path, where: str, budget: int) -> tuple[str, int]:
    """The text of at most ``budget`` bytes of ``path`` and the file's size."""
    got = read_confined(root, path, budget, where)
    return got.data.decode("utf-8", errors="replace"), got.size


def _cut(text: str, budget: int) -> str:
    """The longest beginning of ``text`` of at most ``budget`` UTF-8 bytes."""
    return text.encode("utf-8")[:budget].decode("utf-8", errors="ignore")


def load_instructions(
    project: Path, environ: Mapping[str, str] | None = None, cap: int = CAP
) -> Instructions:
    """Read the instruction files now; unreadable files are skipped."""
    env = os.environ if environ is None else environ
    files: list[Path] = []
    parts: list[str] = []
    cut: list[str] = []
    refused: list[str] = []
    seen: set[Path] = set()
    budget = cap
    for path, root, where in _places(project, env):
        label = shown_path(path, project.resolve())
        try:
            text, size = _read(path, root, where, budget)
        except Missing:
            continue
        except Refused as exc:
            refused.append(f"{label} ({exc})")
            continue
        real = path.resolve()
        if real in seen:  # one file under two names (a symlink inside): once
            continue
        seen.add(real)
        if budget <= 0:
            cut.append(f"{label} left out ({size} bytes)")
            continue
        files.append(path)
        if size > budget or len(text.encode("utf-8")) > budget:
            cut.append(f"{label} cut after {budget} of {size} bytes")
            text = _cut(text, budget)
        budget -= len(text.encode("utf-8"))
        parts.append(f"## {label}\n\n{text.rstrip()}")
    if not parts:
        return Instructions(refused=tuple(refused))
    section = (
        "# Project instructions (AGENTS.md)\n\nFollow these instructions from the user's "
        "AGENTS.md files (outermost first).\n\n" + "\n\n".join(parts)
    )
    if cut:
        section += (f"\n\n[note: the instructions are over {cap // 1024} KB; "
                    + "; ".join(cut) + "]")  # fmt: skip
    return Instructions(tuple(files), section, tuple(cut), tuple(refused))


class Announcer:
    """The ``AGENTS.md`` files as they are at each run: the system prompt to use, and
    the "loaded" line when the set of files changed since it was last announced."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.announced: tuple[tuple[Path, ...], tuple[str, ...]] = ((), ())

    def refresh(self) -> tuple[str, str | None]:
        """``(system prompt, loaded line or None)``."""
        from .prompt import system_prompt

        loaded = load_instructions(self.project)
        prompt = system_prompt(self.project, loaded.section)
        if (loaded.files, loaded.refused) == self.announced:
            return prompt, None
        self.announced = (loaded.files, loaded.refused)
        return prompt, loaded.loaded_line(self.project) or None
