"""``mttui doctor`` in words: what is wrong, what ``--repair`` did, what is left to do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# problems ``--repair`` fixes (a rebuilt index, finished deletes, file modes)
REPAIRABLE = frozenset({"index_corrupt", "index_stale", "not_indexed", "missing_file",
                        "delete_unfinished", "permissions"})
ADVICE = {
    "corrupt_lines": "the damaged line is skipped on every read and the rest of the log is "
                     "kept; nothing to do unless you want it gone (the log is plain JSONL)",
    "torn": "the last line was cut by a crash; it is skipped, later records are appended "
            "after it",
    "seq_gap": "records are missing between others; the session still opens "
               "(`mttui resume-check {sid}` says what a resume would do)",
    "fork_incomplete": "`mttui fork {sid} --finish` makes the fork again from its source "
                       "and removes this one; `mttui delete {sid}` only removes it",
}
DEFAULT_ADVICE = "`mttui resume-check {sid}` says whether and how the session can be resumed"

Problem = Mapping[str, object]


def _who(p: Problem) -> str:
    sid = p.get("session_id")
    return f"session {sid}" if sid else "the data folder"


def doctor_lines(checked: int, problems: Sequence[Problem], repaired: Sequence[Problem],
                 *, repair: bool) -> list[str]:
    """The report as readable lines."""
    lines = [f"checked {checked} session(s): "
             + (f"{len(problems)} problem(s)" if problems else "no problems")]
    for p in problems:
        lines.append(f"  {_who(p)}: {p.get('message')} ({p.get('code')})")
    if repair:
        for r in repaired:
            lines.append(f"  fixed: {r.get('message')}"
                         + (f" ({_who(r)})" if r.get("session_id") else ""))
    left = [p for p in problems if str(p.get("code")) not in REPAIRABLE]
    if left and repair:
        lines.append("not fixed (a log is never rewritten):")
    for p in left if repair else []:
        advice = ADVICE.get(str(p.get("code")), DEFAULT_ADVICE).format(
            sid=p.get("session_id") or "S")
        lines.append(f"  {_who(p)} ({p.get('code')}): {advice}")
    if problems and not repair:
        lines.append("run `mttui doctor --repair` to fix what can be fixed")
    return lines


def doctor_exit(problems: Sequence[Problem], *, repair: bool) -> int:
    """1 when problems remain (after ``--repair``: those it cannot fix), else 0."""
    if not repair:
        return 1 if problems else 0
    return 1 if any(str(p.get("code")) not in REPAIRABLE for p in problems) else 0
