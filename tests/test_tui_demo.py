"""The demo data, the log-marker scan and the literal-text helpers (no Textual needed)."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from mttui.demo import LONG_MESSAGES, build_demo
from mttui.session.markers import Marker, scan_markers
from mttui.session.models import MessageRow
from mttui.session.service import SessionService
from mttui.session.times import relative_time
from mttui.widgets.history_items import items_from_rows, markers_in
from mttui.widgets.text import literal
from tests.support.clock import NOW
from tests.support.tui import msg, write_session


def test_demo_builds_every_kind_of_session_once(home: Path, project: Path) -> None:
    ids = build_demo(home, project)
    assert build_demo(home, project) == ids  # idempotent
    service = SessionService(home, project)
    infos = {s.title: s for s in service.list_sessions().sessions}
    assert len(infos) == 6
    long = next(s for t, s in infos.items() if t and t.startswith("Refactor"))
    assert long.message_count == LONG_MESSAGES and long.compression_count == 1
    assert infos["Clean the build and fix div()"].status.awaiting_approval
    assert infos["Run the test suite (interrupted)"].status.interrupted_tools == 1
    assert infos["Write the release notes"].status.queued == 2
    assert infos["Notes with a damaged line"].status.corrupt_lines == 1
    assert any(t and "会话" in t for t in infos)
    hits = service.search("快速", scope="project")
    assert hits and "会话" in (hits[0].session_title or "")


def test_demo_module_does_not_import_textual() -> None:
    code = "import sys, mttui.demo; print(any(m.startswith('textual') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_markers_are_found_after_the_right_message(service: SessionService, frozen) -> None:
    records = [msg("user", f"m{i}", i) for i in range(1, 6)]
    records.insert(3, ("compression", {"summary": "s", "removed_count": 2}))
    records.append(("session_resumed", {"mode": "execution", "warnings": ["tool_interrupted"]}))
    sid = write_session(service, "x", records)
    path = service.get(sid).path
    with open(path, "ab") as fh:  # a torn tail is no marker and no message
        fh.write(b'{"type":"compression","seq":99,"summ')
    found = scan_markers(path)
    assert [(m.kind, m.anchor) for m in found] == [("compression", 3), ("resumed", 5)]
    assert found[1].data["warnings"] == ["tool_interrupted"]


def test_markers_scan_is_chunk_safe(tmp_path: Path, monkeypatch) -> None:
    import mttui.session.markers as markers

    lines = [b'{"type":"session_start","seq":1}']
    for i in range(2, 30):
        kind = "compression" if i % 10 == 0 else "transcript_message"
        lines.append(b'{"type":"%s","seq":%d}' % (kind.encode(), i))
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    whole = [(m.anchor, m.record_seq) for m in markers.scan_markers(path)]
    assert whole == [(8, 10), (17, 20)]  # messages 2..9 precede seq 10; 2..19 but 10, seq 20
    for chunk in (7, 24, 25, 33):  # lines and patterns cross chunk boundaries
        monkeypatch.setattr(markers, "CHUNK", chunk)
        assert [(m.anchor, m.record_seq) for m in markers.scan_markers(path)] == whole


def test_items_place_markers_and_join_tool_results() -> None:
    rows = [
        MessageRow(1, "a", "user", "hi", "sent", ""),
        MessageRow(2, "b", "assistant", "", "sent", "",
                   tool_calls=[{"id": "c1", "name": "shell", "args": {"command": "ls"}}]),
        MessageRow(3, "c", "tool", "file", "sent", "", tool_call_id="c1", name="shell"),
    ]
    marker = Marker("compression", 1, 10, {"summary": "s"})
    items = items_from_rows(rows, [marker])
    assert [(i.kind, i.seq) for i in items] == [("user", 1), ("compression", 1), ("tool", 2)]
    assert items[2].output == "file" and items[2].result_seq == 3
    assert markers_in([marker], 2, 3, first=False, last=True) == []
    assert markers_in([marker], 1, 3, first=True, last=True) == [marker]


def test_literal_makes_escapes_visible() -> None:
    assert literal("\x1b[31mred\x1b[0m\r\x07") == "␛[31mred␛[0m␍␇"
    assert literal("tab\tand\nnewline") == "tab\tand\nnewline"
    assert literal("\x9b2J") == "\ufffd2J"


def test_relative_times() -> None:
    def ago(**kw) -> str:
        return (NOW - timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    assert relative_time(ago(seconds=10), NOW) == "just now"
    assert relative_time(ago(minutes=5), NOW) == "5m ago"
    assert relative_time(ago(hours=3), NOW) == "3h ago"
    assert relative_time(ago(days=2), NOW) == "2d ago"
    assert relative_time(ago(days=40), NOW) == "Oct 20"
    assert relative_time(ago(days=400), NOW) == "2025-10-25"
    assert relative_time("garbage", NOW) == "—"
