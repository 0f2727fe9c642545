"""The read-side commands: sessions, history, search, export, rename, delete, reindex, doctor.

The service catches up with the logs before its first answer, so no command asks it to.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime

from mttui.session.models import SNIPPET_END, SNIPPET_START
from mttui.session.service import SessionService
from mttui.session.times import relative_time

from .errors import Exit
from .output import clip, emit_json, table, visible

DEFAULT_LIMIT = 50  # the parser's default --limit


def cmd_sessions(args: argparse.Namespace, service: SessionService) -> int:
    page = service.list_sessions(
        all_projects=args.all_projects, limit=args.limit, cursor=args.cursor
    )
    if args.json:
        emit_json(
            {"sessions": [s.as_json() for s in page.sessions], "next_cursor": page.next_cursor}
        )
        return 0
    if not page.sessions:
        print("no sessions yet" if args.all_projects else
              "no sessions yet in this project (try --all-projects)")
        return 0
    rows = []
    now = datetime.now(UTC)
    for s in page.sessions:
        st = s.status
        badges = " ".join(
            b for b in (
                "⏸" if st.awaiting_approval else "",
                f"⚠{st.interrupted_tools}" if st.interrupted_tools else "",
                f"⧗{st.queued}" if st.queued else "",
                f"✗{st.corrupt_lines}" if st.corrupt_lines else "",
            ) if b
        )
        rows.append([s.id, relative_time(s.updated_at, now), str(s.message_count),
                     s.model or "-", badges, clip(s.title or "(untitled)", 60)])
    print(visible(table(["ID", "UPDATED", "MSGS", "MODEL", "STATUS", "TITLE"], rows)))
    if page.next_cursor:
        keep = (" --all-projects" if args.all_projects else "") + \
            (f" --limit {args.limit}" if args.limit != DEFAULT_LIMIT else "")
        print(f"\nmore: mttui sessions{keep} --cursor {page.next_cursor}")
    return 0


def cmd_history(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.session.timeline import mark_rewound

    info = service.resolve(args.session)
    page = service.history(info.id, limit=args.limit, before=args.before, around=args.around)
    if args.json:
        emit_json({
            "session_id": info.id,
            "messages": mark_rewound(info.path, [m.as_json() for m in page.messages]),
            "has_more": page.has_more,
            "next_before": page.next_before,
        })
        return 0
    if page.has_more:
        print(f"… older messages: mttui history {info.id} --before {page.next_before}\n")
    for m in page.messages:
        head = f"#{m.seq} {m.role}" + (f" ({m.status})" if m.status not in ("sent", "") else "")
        print(head)
        body = m.content
        if m.tool_calls:
            calls = ", ".join(f"{c.get('name')}({clip(str(c.get('args')), 60)})"
                              for c in m.tool_calls)
            body = (body + "\n" if body else "") + f"→ {calls}"
        for line in visible(body or "").splitlines() or [""]:
            print("  " + line)
        print()
    return 0


def _indexing(owed: int) -> None:
    print(f"mttui: first indexing {owed:,} messages for search (once: after an upgrade or a "
          "fork)", file=sys.stderr)  # fmt: skip


def cmd_search(args: argparse.Namespace, service: SessionService) -> int:
    scope = "session" if args.session else ("all" if args.all_projects else "project")
    session_id = service.resolve(args.session).id if args.session else None
    hits = service.search(args.query, scope=scope, session_id=session_id, limit=args.limit,
                          indexing=_indexing)  # fmt: skip
    if args.json:
        emit_json({"query": args.query, "hits": [h.as_json() for h in hits]})
        return 0
    if not hits:
        print("no matches")
        return 0
    for h in hits:
        snippet = visible(" ".join(h.snippet.split()))
        if sys.stdout.isatty():
            snippet = snippet.replace(SNIPPET_START, "\x1b[1;33m").replace(SNIPPET_END, "\x1b[0m")
        title = visible(clip(h.session_title or "", 40))
        print(f"{h.session_id}  #{h.seq:<6} {h.role:<9} {title}")
        print(f"    {snippet}")
    return 0


def cmd_export(args: argparse.Namespace, service: SessionService) -> int:
    info = service.resolve(args.session)
    chunks = service.export(info.id, args.format)
    if args.output:
        # a transcript is as private as the log it comes from, whatever the umask
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with open(fd, "w", encoding="utf-8") as fh:
            for chunk in chunks:
                fh.write(chunk)
        print(f"exported {info.id} to {visible(args.output)}", file=sys.stderr)
    else:
        for chunk in chunks:
            sys.stdout.write(chunk if args.format == "jsonl" else visible(chunk))
    return 0


def cmd_rename(args: argparse.Namespace, service: SessionService) -> int:
    info = service.resolve(args.session)
    title = " ".join(args.title.split())
    if not title:
        print("mttui: the title is empty", file=sys.stderr)
        return 2
    service.rename(info.id, title)
    print(f"{info.id}: {visible(title)}")
    return 0


def cmd_delete(args: argparse.Namespace, service: SessionService) -> int:
    info = service.resolve(args.session)
    if not args.yes:
        if not sys.stdin.isatty():
            print("mttui: refusing to delete without --yes (stdin is not a terminal)",
                  file=sys.stderr)
            return 2
        answer = input(f"delete session {info.id} '{info.title or ''}'? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("kept")
            return 0
    service.delete(info.id)
    print(f"deleted {info.id}")
    return 0


def cmd_reindex(args: argparse.Namespace, service: SessionService) -> int:
    bar = _ProgressBar() if sys.stdout.isatty() and not args.json else None
    result = service.reindex(progress=bar.update if bar else None)
    if bar:
        bar.finish()
    if args.json:
        emit_json({"sessions": result.sessions, "messages": result.messages,
                   "corrupt_lines": result.corrupt_lines, "seconds": round(result.seconds, 3)})
    else:
        print(f"indexed {result.sessions} sessions, {result.messages} messages "
              f"({result.corrupt_lines} corrupt lines) in {result.seconds:.1f} s")
    return 0


def cmd_doctor(args: argparse.Namespace, service: SessionService) -> int:
    report = service.doctor(repair=args.repair)
    if args.json:
        emit_json({"sessions_checked": report.sessions_checked, "problems": report.problems,
                   "repaired": report.repaired})
    else:
        from .doctor_text import doctor_lines

        for line in doctor_lines(report.sessions_checked, report.problems, report.repaired,
                                 repair=args.repair):
            print(line)
    from .doctor_text import doctor_exit

    return doctor_exit(report.problems, repair=args.repair)


def cmd_resume_check(args: argparse.Namespace, service: SessionService) -> int:
    """Read-only: what a resume would do (``mttui.core.resume_check``)."""
    from mttui.core.resume_check import check

    plan, found = check(service, args.session)
    if args.json:
        emit_json(plan.as_json())
    if not found and plan.refusal is not None:  # session_not_found
        print(f"mttui: {visible(str(plan.refusal['message']))}", file=sys.stderr)
        return Exit.NOT_FOUND
    if not args.json:
        print(visible(plan.describe()))
    return Exit.OK


class _ProgressBar:
    """A one-line progress bar on stderr for terminals."""

    def __init__(self) -> None:
        self._last = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        width = 30
        filled = int(width * done / total) if total else width
        pct = 100 * done // total if total else 100
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {pct:3d}% {done}/{total}")
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\n")
