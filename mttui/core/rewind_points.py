"""What the rewind picker shows: the user messages, newest first, with the files each
turn changed, and the preview of one rewind (files and a diff summary).

Read-only: nothing here writes a log, a snapshot or the index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mttui.session.service import SessionService
from mttui.session.snapshots import GitError, ShadowRepo, git_available
from mttui.session.timeline import read_timeline
from mttui.session.transcript import fold

from .rewind import RewindRefused, RewindResult, plan_rewind


@dataclass
class RewindPoint:
    seq: int
    text: str
    files: list[str] = field(default_factory=list)  # what that turn changed
    snapshot: bool = False  # a code rewind is possible


@dataclass
class RewindPreview:
    result: RewindResult | None
    stat: str = ""
    code_refused: str = ""  # why code cannot be rewound (conversation still can)
    # what the snapshot left out (nested repositories, files over the size limit): a
    # code rewind leaves them as they are
    skipped: list[str] = field(default_factory=list)


def rewind_points(service: SessionService, session_id: str) -> list[RewindPoint]:
    """The session's user messages (not on a rewound branch), newest first."""
    info = service.get(session_id)
    records, _ = service.records(info.id)
    messages = fold(records).messages
    timeline = read_timeline(info.path, messages)
    abandoned = timeline.abandoned_seqs()
    repo = ShadowRepo(service.layout.home, Path(info.project))
    cps = sorted((c for c in timeline.checkpoints if c.error is None), key=lambda c: c.seq)
    usable = git_available() and repo.exists
    points: list[RewindPoint] = []
    for i, m in enumerate(messages):
        seq = i + 1
        if m.get("role") != "user" or seq in abandoned:
            continue
        point = RewindPoint(seq, str(m.get("content") or ""))
        own = [c for c in cps if c.seq == seq]
        point.snapshot = usable and timeline.checkpoint_for(seq) is not None
        if own and usable:
            later = [c for c in cps if c.seq > seq]
            try:
                if later:
                    point.files = _changed(repo.diff_between(own[0].ref, later[0].ref))
                else:
                    point.files = _changed(repo.changes(own[0].ref))
            except GitError:
                point.files = []
        points.append(point)
    points.reverse()
    return points


def _changed(changes: object) -> list[str]:
    restored = list(getattr(changes, "restored", []))
    deleted = list(getattr(changes, "deleted", []))
    return sorted(set(restored + deleted))


def preview(service: SessionService, session_id: str, seq: int) -> RewindPreview:
    """The dry run of a rewind to ``seq`` (both when a snapshot exists)."""
    info = service.get(session_id)
    try:
        result = plan_rewind(service, info.id, seq, conversation=True, code=True)
    except RewindRefused as exc:
        if exc.usage:
            raise
        return RewindPreview(plan_rewind(service, info.id, seq, code=False), "", str(exc))
    records, _ = service.records(info.id)
    timeline = read_timeline(info.path, fold(records).messages)
    cp = timeline.checkpoint_for(seq)
    stat = ""
    if cp is not None and cp.error is None:
        repo = ShadowRepo(service.layout.home, Path(info.project))
        stat = repo.worktree_stat(cp.ref)
    return RewindPreview(result, stat, skipped=list(cp.skipped) if cp is not None else [])
