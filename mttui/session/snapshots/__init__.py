"""File checkpoints: a shadow git repository per project, outside the project.

``ShadowRepo(home, project)`` snapshots the project's files (``snapshot``), lists
what a restore would change (``changes``) and restores (``restore``). Driven with
the ``git`` executable; ``git_available()`` says whether there is one.
"""

from .git import GitError, git_available
from .guard import ToolsRunning, own_outputs
from .shadow import MAX_FILE_BYTES, Changes, ShadowRepo, Snapshot, snapshots_dir

__all__ = ["MAX_FILE_BYTES", "Changes", "GitError", "ShadowRepo", "Snapshot", "ToolsRunning",
           "git_available", "own_outputs", "snapshots_dir"]
