"""Messages a rewind abandoned, collapsed in the history under one line.

``⟲ 12 messages rewound — enter to show``: the messages of a rewound branch
(timetravel.md) stay readable and searchable, but out of the way. The branch's
messages are found from the ``rewind`` markers (an undo brings a branch back, as
``session.timeline`` folds them); each run of them on a page gets a header item,
and its items are hidden (drawn as no lines) until the header is expanded. A search
hit inside a branch expands it (``HistoryView``).
"""

from __future__ import annotations

from collections.abc import Iterable

from mttui.session.markers import Marker

from .history_items import Item

MESSAGE_KINDS = frozenset({"user", "assistant", "tool", "system"})


def abandoned_seqs(markers: Iterable[Marker]) -> set[int]:
    """Message seqs on rewound branches, from the ``rewind`` markers in log order."""
    out: set[int] = set()
    stack: list[set[int]] = []
    for m in sorted((m for m in markers if m.kind == "rewind"), key=lambda m: m.record_seq):
        lo, hi = m.data.get("abandoned_from_seq"), m.data.get("abandoned_to_seq")
        span = set(range(lo, hi + 1)) if isinstance(lo, int) and isinstance(hi, int) else set()
        if not (m.data.get("undo") or m.data.get("undoes")):
            stack.append(set(out))
            out |= span
        elif stack:
            out = stack.pop() | span
    return out


def group_rewound(items: list[Item], markers: Iterable[Marker]) -> list[Item]:
    """``items`` with each run of abandoned messages behind a collapsed header; the
    notice of a rewind (not of an undo) is left out: the header says it."""
    markers = list(markers)
    gone = abandoned_seqs(markers)
    if not gone and not any(m.kind == "rewind" for m in markers):
        return items
    out: list[Item] = []
    run: list[Item] = []

    def close() -> None:
        if not run:
            return
        seqs = {s for it in run for s in (it.seq, it.result_seq) if s is not None}
        head = Item("rewound", f"rg{run[0].seq}", run[0].seq,
                    data={"count": len(seqs), "first": min(seqs), "last": max(seqs)})
        for it in run:
            it.data["group"] = head
        out.append(head)
        out.extend(run)
        run.clear()

    for it in items:
        if it.kind in MESSAGE_KINDS and it.seq in gone:
            run.append(it)
            continue
        if it.kind == "notice" and it.key.startswith("rw") and it.data.get("rewind") == "to":
            continue
        close()
        out.append(it)
    close()
    return out


def header_text(item: Item) -> str:
    n = int(item.data.get("count") or 0)
    what = f"{n} message{'s' if n != 1 else ''} rewound"
    return f"⟲ {what} — enter to {'hide' if item.expanded else 'show'}"


def is_hidden(item: Item) -> bool:
    """An item of a collapsed rewound branch (drawn as no lines)."""
    group = item.data.get("group")
    return isinstance(group, Item) and not group.expanded


def members(items: Iterable[Item], head: Item) -> list[Item]:
    return [it for it in items if it.data.get("group") is head]
