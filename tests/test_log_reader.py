"""The event log writer and its tolerant reader, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mttui.session.lock import SessionLocked
from mttui.session.log import SessionLog, dump_record
from mttui.session.reader import (
    ReadStats,
    first_record,
    last_seq,
    read_all,
    read_record_at,
    read_records,
)


def _log(tmp_path: Path) -> SessionLog:
    return SessionLog.create(
        tmp_path / "session-20260101-000000-abcdefabcdef.jsonl", "abcdefabcdef"
    )


def test_round_trip_keeps_every_field_and_utf8(tmp_path: Path) -> None:
    with _log(tmp_path) as log:
        log.append("session_start", v=1, thread_id="t1", title=None)
        log.append("transcript_message", message={"id": "m1", "role": "user", "content": "快速 ✓"})
        path = log.path
    raw = path.read_bytes()
    assert "快速".encode() in raw  # ensure_ascii=False: grep works on raw files
    records, stats = read_all(path)
    assert [r["seq"] for r in records] == [1, 2]
    assert records[1]["message"]["content"] == "快速 ✓"
    assert records[0]["session_id"] == "abcdefabcdef"
    assert records[0]["timestamp"].endswith("Z") and len(records[0]["timestamp"]) == 24
    assert stats.corrupt_lines == 0 and stats.records == 2
    assert path.stat().st_mode & 0o777 == 0o600


def test_torn_tail_is_corrupt_when_final_and_left_alone_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = dump_record({"type": "session_start", "seq": 1, "timestamp": "x", "session_id": "s"})
    path.write_bytes(good + b'{"type": "transcript_mess')
    stats = ReadStats()
    assert len(list(read_records(path, stats=stats))) == 1
    assert stats.corrupt_lines == 1 and stats.torn_tail
    live = ReadStats()
    assert len(list(read_records(path, tail_is_final=False, stats=live))) == 1
    assert live.corrupt_lines == 0 and live.end_offset == len(good)


def test_garbage_invalid_utf8_and_missing_fields_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        dump_record({"type": "session_start", "seq": 1}),
        b"this is not json\n",
        b'{"type": "run_start", "seq": 2, "bad": "\xff\xfe"}\n',
        b'{"seq": 3}\n',
        b"[1, 2, 3]\n",
        b'{"type": "run_start", "seq": "4"}\n',
        b"\n",
        dump_record({"type": "run_end", "seq": 5}),
    ]
    path.write_bytes(b"".join(lines))
    records, stats = read_all(path)
    assert [r["seq"] for r in records] == [1, 5]
    assert stats.corrupt_lines == 5
    assert stats.seq_gaps == 1
    assert len(stats.corrupt_offsets) == 5


def test_unknown_types_are_read_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        dump_record({"type": "session_start", "seq": 1})
        + dump_record({"type": "from_the_future", "seq": 2, "x": 1})
    )
    records, stats = read_all(path)
    assert [r["type"] for r in records] == ["session_start", "from_the_future"]
    assert stats.unknown_types == 1 and stats.corrupt_lines == 0


def test_read_from_offset_and_record_at(tmp_path: Path) -> None:
    with _log(tmp_path) as log:
        for i in range(5):
            log.append("run_start", run_id=f"r{i}")
        path = log.path
    offsets = [off for off, _ in read_records(path)]
    assert read_record_at(path, offsets[3])["run_id"] == "r3"  # type: ignore[index]
    later = [rec["seq"] for _, rec in read_records(path, offsets[2], prev_seq=2)]
    assert later == [3, 4, 5]
    assert last_seq(path) == 5
    assert first_record(path)["seq"] == 1  # type: ignore[index]


def test_reopen_after_torn_tail_continues_seq_on_a_new_line(tmp_path: Path) -> None:
    with _log(tmp_path) as log:
        log.append("session_start", v=1)
        log.append("run_start", run_id="r1")
        path = log.path
    with open(path, "ab") as fh:
        fh.write(b'{"type": "run_end", "se')
    with SessionLog.open(path, "abcdefabcdef") as log:
        assert log.append("run_end", run_id="r1")["seq"] == 3
    records, stats = read_all(path)
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert stats.corrupt_lines == 1
    assert all(json.loads(line) for line in path.read_text().splitlines()[-1:])


def test_second_writer_is_refused_with_the_holder_pid(tmp_path: Path) -> None:
    with _log(tmp_path) as log:
        with pytest.raises(SessionLocked) as err:
            SessionLog.open(log.path, log.session_id)
        assert "process" in str(err.value)
